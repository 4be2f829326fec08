import Dispatch
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes this member's payload file after each local commit, off the
/// writer's critical path: the writer hands over the ``Payload`` it built
/// inside its transaction, and this queue only encodes and renames it.
///
/// What the payload file is for: it is the one wake-up a peer gets *after*
/// the commit is visible (the `-wal` file is modified while the commit is
/// being written, so a peer woken by it may look too early), and a record of
/// each save that programs in any language can follow by watching files. It
/// is written under `tmp/` (not watched) and renamed into `members/<me>/`,
/// so watchers see one `IN_MOVED_TO` for a complete file. A failure to
/// publish (disk full, folder removed) is logged and costs peers latency
/// only: they read the history.
///
/// When commits come faster than payloads can be written, the publisher does
/// not queue a backlog: it publishes the newest pending payload and skips the
/// older ones. Peers only need the wake-up (they read every transaction from
/// the history), and the format says payloads may be missing.
final class Publisher: Sendable {
    private let queue = DispatchQueue(label: "GroupStore.Publisher")
    private let member: MemberName
    private let directory: GroupDirectory
    private let folder: Mutex<DirectoryHandle>
    private let logger: Logger
    private let metrics: GroupMetrics
    /// The newest payload committed and not yet published; a drain is
    /// scheduled whenever this goes from `nil` to a payload.
    private let pending = Mutex<Payload?>(nil)

    init(member: MemberName, directory: GroupDirectory, folder: DirectoryHandle, logger: Logger, metrics: GroupMetrics) {
        self.member = member
        self.directory = directory
        self.folder = Mutex(folder)
        self.logger = logger
        self.metrics = metrics
    }

    /// Publishes `payload` soon (unless a newer one replaces it first).
    func publish(_ payload: Payload) {
        let first = pending.withLock { pending -> Bool in
            guard let waiting = pending else {
                pending = payload
                return true
            }
            if waiting.seq < payload.seq { pending = payload }
            return false
        }
        if first { queue.async { self.drain() } } else { metrics.payloadSkipped() }
    }

    private func drain() {
        guard let payload = pending.withLock({ pending in defer { pending = nil }; return pending }) else { return }
        let bytes = Array(payload.json.utf8)
        let name = PayloadFileName.name(seq: payload.seq)
        let temp = "\(member).\(payload.seq).\(getpid()).tmp"
        do {
            let folder = self.folder.withLock { $0 }
            try FileIO.publish(bytes, as: name, in: folder, staging: directory.staging, tempName: temp)
            metrics.payloadPublished()
        } catch {
            // A removed member folder is re-created by this member's
            // Membership (the one repair path), which then hands the new
            // folder over; until then peers read the history.
            metrics.payloadFailed()
            logger.info(
                "payload not published; peers will read the change from the history",
                metadata: ["seq": "\(payload.seq)", "error": "\(error.message)"])
        }
    }

    /// Publishes into `folder` from now on (the member folder was re-created).
    func replaceFolder(_ folder: DirectoryHandle) {
        self.folder.withLock { $0 = folder }
    }

    /// Waits until everything handed over so far is published.
    func flush() {
        queue.sync {}
    }
}
