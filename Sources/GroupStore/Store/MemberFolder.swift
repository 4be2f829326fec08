import Synchronization

/// This member's folder (`members/<member>/`) and the lock held in it while
/// the process runs.
///
/// The ``Publisher`` writes payloads into it and ``Delivery`` writes the
/// cursor there; both read the current folder from here, so that when the
/// folder is removed while the member runs and ``repair()`` makes it again,
/// each picks the new one up with no one telling them.
final class MemberFolder: Sendable {
    let member: MemberName
    let directory: GroupDirectory
    private let state: Mutex<(folder: DirectoryHandle, lock: MemberLock?)>

    init(member: MemberName, directory: GroupDirectory, folder: DirectoryHandle, lock: MemberLock) {
        self.member = member
        self.directory = directory
        state = Mutex((folder, lock))
    }

    /// The folder as it is now.
    var handle: DirectoryHandle { state.withLock { $0.folder } }

    /// Releases the member name (the store closed).
    func release() {
        state.withLock { $0.lock = nil }
    }

    /// Whether this member comes first, by name, among the live members of
    /// the group: the one that closes an outside writer's changes into a
    /// transaction, so that one member, not all, takes SQLite's write lock
    /// for it. Only the members named before it are looked at.
    var isFirstLive: Bool {
        guard let names = try? directory.memberNames() else { return true }
        for name in names where name.rawValue < member.rawValue {
            if let folder = try? DirectoryHandle(name: name.rawValue, in: directory.members), MemberLock.isHeld(in: folder) {
                return false
            }
        }
        return true
    }

    /// What ``repair()`` did.
    enum Repair {
        /// The folder and its lock are in place: nothing to do.
        case intact
        /// Made again, with the lock taken in it again.
        case repaired(path: String)
        /// Another process took the member name meanwhile.
        case taken(GroupStoreError)
        /// It cannot be made again (a symbolic link in its place, a full disk).
        case failed(GroupStoreError)
    }

    /// Makes the folder again after it was removed, and takes the lock in it
    /// again, so no other process can claim the name. A folder replaced by a
    /// symbolic link is not followed.
    func repair() -> Repair {
        // Several events may report one removal; repair once.
        let linked = state.withLock { $0.lock?.isLinked(in: directory.members, member: member) ?? false }
        if (try? directory.members.status(of: member.rawValue)) != nil, linked { return .intact }
        do {
            let folder = try directory.memberFolder(member, create: true)
            let lock = try MemberLock(member: member, folder: folder, group: directory.path)
            state.withLock { $0 = (folder, lock) }
            return .repaired(path: folder.path)
        } catch  where error.code == .memberAlreadyLive {
            return .taken(error)
        } catch {
            return .failed(error)
        }
    }
}
