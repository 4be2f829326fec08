import Foundation
import Logging
import Synchronization

/// This process's membership of the group: its lock, its folder, and whether
/// it is still in the group. The one owner that the group watch reports to
/// when the group's own structure changes under this member; it repairs this
/// member's folder (the only place that does) or leaves the group.
///
/// `@unchecked Sendable`: `lock` and `departure` are in `Mutex`es; the parts
/// it acts on (merger, watch, publisher, feed, notifier) are only touched from
/// ``handle(_:)``, which runs on the merger's queue, as do their own methods.
final class Membership: @unchecked Sendable {
    /// What the group watch saw happen to the group's structure.
    enum Event: Sendable {
        /// The group directory or its database was removed or replaced.
        case groupReplaced(String)
        /// This member's own folder was removed.
        case ownFolderRemoved
    }

    let member: MemberName
    let directory: GroupDirectory
    private let lock: Mutex<MemberLock?>
    private let departure = Mutex<GroupStoreError?>(nil)
    private let logger: Logger
    private let merger: Merger
    private let publisher: Publisher
    private let feed: SaveFeed
    private let notifier: SaveNotifier
    /// Set once, right after init, before the watch can report anything.
    private(set) var watch: GroupWatch!

    init(
        member: MemberName, directory: GroupDirectory, lock: MemberLock, merger: Merger, publisher: Publisher, feed: SaveFeed,
        notifier: SaveNotifier, logger: Logger
    ) {
        self.member = member
        self.directory = directory
        self.lock = Mutex(lock)
        self.merger = merger
        self.publisher = publisher
        self.feed = feed
        self.notifier = notifier
        self.logger = logger
        watch = GroupWatch(merger: merger, directory: directory, member: member, logger: logger) { [weak self] event in
            self?.handle(event)
        }
    }

    /// Why this member left the group, if it did.
    var departureError: GroupStoreError? { departure.withLock { $0 } }

    /// Releases the member name (the store closed).
    func releaseLock() {
        lock.withLock { $0 = nil }
    }

    /// Runs on the merger's queue.
    func handle(_ event: Event) {
        switch event {
        case .groupReplaced(let reason): leave(reason)
        case .ownFolderRemoved: repairOwnFolder()
        }
    }

    /// The group directory or database was removed or replaced under this
    /// member: stop merging, end the save streams, refuse further writes
    /// (they would land in a file no other member sees).
    private func leave(_ reason: String) {
        let error = GroupStoreError(.groupReplaced, "\(reason) while member '\(member)' ran; reopen the store", path: directory.path)
        guard
            departure.withLock({ current -> Bool in
                defer { if current == nil { current = error } }
                return current == nil
            })
        else { return }
        logger.info("left the group: \(error.message)")
        watch.stop()
        merger.close()
        notifier.close()
        feed.finish()
    }

    /// This member's folder was removed while it ran: make it again and take
    /// the lock in it again, so no other process can claim the name. A folder
    /// replaced by a symbolic link is not followed: payloads stop (peers read
    /// the history) until it is a directory again.
    private func repairOwnFolder() {
        // Several events may report one removal; repair once.
        let linked = lock.withLock { $0?.isLinked(in: directory.members, member: member) ?? false }
        if (try? directory.members.status(of: member.rawValue)) != nil, linked { return }
        do {
            let folder = try directory.memberFolder(member, create: true)
            let newLock = try MemberLock(member: member, folder: folder, group: directory.path)
            lock.withLock { $0 = newLock }
            publisher.replaceFolder(folder)
            merger.replaceFolder(folder)
            watch.watchOwnFolder()
            logger.info("this member's folder was removed; re-created it", metadata: ["path": "\(folder.path)"])
        } catch where error.code == .memberAlreadyLive {
            leave("another process took member name '\(member)' after its folder was removed")
        } catch {
            logger.info(
                "this member's folder was removed and cannot be re-created; payloads are not published, peers read the history",
                metadata: ["error": "\(error)"])
        }
    }
}
