import Dispatch
import Foundation
import GRDB
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes this member's payload file after each local commit, off the
/// writer's critical path: the writer only enqueues a sequence number.
///
/// The payload is built from the history (the truth), written under `tmp/`
/// (not watched) and renamed into `members/<me>/`, so watchers see one
/// `IN_MOVED_TO` for a complete file. A failure to publish (disk full, folder
/// removed) is logged and costs peers latency only: they read the history.
///
/// When commits come faster than payloads can be written, the publisher does
/// not queue a backlog: it publishes the newest pending transaction and skips
/// the older ones. Peers only need the wake-up (they read every transaction
/// from the history), and the format says payloads may be missing.
final class Publisher: Sendable {
    /// Keys listed in one payload at most; past it the payload says `"truncated":true`.
    static let keyLimit = 10_000

    private let queue = DispatchQueue(label: "GroupStore.Publisher")
    private let pool: DatabasePool
    private let member: MemberName
    private let directory: GroupDirectory
    private let folder: Mutex<DirectoryHandle>
    private let logger: Logger
    /// Sequence numbers committed and not yet published; a drain is scheduled
    /// whenever this goes from empty to not empty.
    private let pending = Mutex<[Int64]>([])

    init(pool: DatabasePool, member: MemberName, directory: GroupDirectory, folder: DirectoryHandle, logger: Logger) {
        self.pool = pool
        self.member = member
        self.directory = directory
        self.folder = Mutex(folder)
        self.logger = logger
    }

    /// Publishes transaction `seq` soon.
    func publish(_ seq: Int64) {
        let first = pending.withLock { pending -> Bool in
            pending.append(seq)
            return pending.count == 1
        }
        if first { queue.async { self.drain() } }
    }

    /// Publishes the newest pending transaction; older ones pending with it are skipped.
    private func drain() {
        let seqs = pending.withLock { pending -> [Int64] in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        guard let newest = seqs.max() else { return }
        publishNow(newest)
    }

    /// Publishes into `folder` from now on (the member folder was re-created).
    func replaceFolder(_ folder: DirectoryHandle) {
        self.folder.withLock { $0 = folder }
    }

    /// Waits until everything enqueued so far is published.
    func flush() {
        queue.sync {}
    }

    private func publishNow(_ seq: Int64) {
        let save: Save?
        do {
            save = try pool.read { db in try HistoryReader.transaction(db, seq: seq) }
        } catch {
            logger.info("payload not published: cannot read the history", metadata: ["seq": "\(seq)", "error": "\(error)"])
            return
        }
        // Already pruned: nobody needs the payload any more.
        guard let save else { return }
        let bytes = Array(save.payloadJSON(keyLimit: Self.keyLimit).utf8)
        let name = PayloadFileName.name(seq: seq)
        let temp = "\(member).\(seq).\(getpid()).tmp"
        do {
            try write(bytes, name: name, temp: temp)
        } catch {
            // A removed member folder is re-created by this member's
            // Membership (the one repair path), which then hands the new
            // folder over; until then peers read the history.
            logFailure(error, seq: seq)
        }
    }

    private func write(_ bytes: [UInt8], name: String, temp: String) throws(GroupStoreError) {
        let folder = self.folder.withLock { $0 }
        try FileIO.publish(bytes, as: name, in: folder, staging: directory.staging, tempName: temp)
    }

    private func logFailure(_ error: GroupStoreError, seq: Int64) {
        logger.info(
            "payload not published; peers will read the change from the history",
            metadata: ["seq": "\(seq)", "error": "\(error.message)"])
    }
}
