import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The `lock` file of a member folder, held with `flock` while the member's
/// process runs. The kernel releases it when the process dies, however it dies,
/// so it tells liveness and keeps a name to one live process.
final class MemberLock: Sendable {
    static let fileName = "lock"
    private let fd: CInt

    /// Takes the lock of `member`.
    /// - Throws: ``GroupStoreError/Code/memberAlreadyLive`` if a live process holds it.
    init(member: MemberName, folder: DirectoryHandle, group: String) throws(GroupStoreError) {
        let fd = try folder.openFile(Self.fileName, flags: O_RDWR | O_CREAT)
        if retryingEINTR({ flock(fd, LOCK_EX | LOCK_NB) }) != 0 {
            let error = errno
            let holder = Self.holder(fd)
            close(fd)
            if error == EWOULDBLOCK {
                let who = holder.map { " (pid \($0))" } ?? ""
                throw GroupStoreError(
                    .memberAlreadyLive, "member '\(member)' is already live in group \(group)\(who)",
                    path: folder.path + "/" + Self.fileName)
            }
            throw GroupStoreError.system("cannot lock", path: folder.path + "/" + Self.fileName, errno: error)
        }
        // Record who holds it, for `groupstore status` and error messages.
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    deinit { _ = close(fd) }

    /// Whether the locked file is still `members/<member>/lock` (and not a
    /// file that was deleted or replaced since).
    func isLinked(in members: DirectoryHandle, member: MemberName) -> Bool {
        var held = stat()
        guard fstat(fd, &held) == 0, held.st_nlink > 0,
            let folder = try? DirectoryHandle(name: member.rawValue, in: members),
            let current = try? folder.status(of: Self.fileName)
        else { return false }
        return current.st_ino == held.st_ino && current.st_dev == held.st_dev
    }

    /// Whether a live process holds the lock in `folder`.
    static func isHeld(in folder: DirectoryHandle) -> Bool {
        guard let fd = try? folder.openFile(fileName, flags: O_RDONLY) else { return false }
        defer { close(fd) }
        if retryingEINTR({ flock(fd, LOCK_SH | LOCK_NB) }) == 0 {
            _ = flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    /// The pid of the live process holding the lock in `folder`, if any.
    static func liveHolder(in folder: DirectoryHandle) -> Int32?? {
        guard isHeld(in: folder) else { return nil }
        guard let fd = try? folder.openFile(fileName, flags: O_RDONLY) else { return .some(nil) }
        defer { close(fd) }
        return .some(holder(fd))
    }

    /// The pid written in an open lock file, if readable.
    private static func holder(_ fd: CInt) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
