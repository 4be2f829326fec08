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
/// older ones. Once that happens (a commit found a payload still waiting) it
/// also writes at most one payload per ``minimumInterval`` until commits slow
/// down: flat out, a file per commit took a core of a two-core host from the
/// writer and woke every peer once more per commit, while peers are woken by
/// the `-wal` anyway and read every transaction from the history (the format
/// says payloads may be missing). A steady stream that the publisher keeps up
/// with, even one commit a millisecond, is never delayed. A flush publishes
/// what waits at once.
///
/// `@unchecked Sendable`: `lastPublished` and `lastWasCongested` are touched
/// on `queue` only; the rest is immutable or behind a `Mutex`.
final class Publisher: @unchecked Sendable {
    /// The shortest time between two payload files while commits come faster
    /// than they are published: 1 ms.
    static let defaultMinimumInterval: UInt64 = 1_000_000
    /// The shortest time between two payload files while congested (nanoseconds).
    let minimumInterval: UInt64
    private let queue = DispatchQueue(label: "GroupStore.Publisher")
    private let member: MemberName
    /// This member's folder (re-created if removed while it runs).
    private let folder: MemberFolder
    private let logger: Logger
    private let metrics: GroupMetrics
    /// The newest payload committed and not yet published (a drain is
    /// scheduled whenever it goes from `nil` to a payload), and whether a
    /// commit replaced a waiting one since the last drain.
    private let pending = Mutex<(payload: Payload?, congested: Bool)>((nil, false))
    /// When the last payload was written (uptime nanoseconds; on `queue`).
    private var lastPublished: UInt64 = 0
    /// Whether the payload written last had replaced older ones (on `queue`).
    private var lastWasCongested = false

    init(
        member: MemberName, folder: MemberFolder, logger: Logger, metrics: GroupMetrics,
        minimumInterval: UInt64 = Publisher.defaultMinimumInterval
    ) {
        self.minimumInterval = minimumInterval
        self.member = member
        self.folder = folder
        self.logger = logger
        self.metrics = metrics
    }

    /// Publishes `payload` soon (unless a newer one replaces it first).
    func publish(_ payload: Payload) {
        let first = pending.withLock { pending -> Bool in
            guard let waiting = pending.payload else {
                pending.payload = payload
                return true
            }
            if waiting.seq < payload.seq { pending.payload = payload }
            pending.congested = true
            return false
        }
        if first { queue.async { self.drainWhenDue() } } else { metrics.payloadSkipped() }
    }

    /// Publishes what waits now; or, while commits come faster than payloads
    /// are written, once ``minimumInterval`` has passed since the last one.
    /// On `queue`.
    private func drainWhenDue() {
        let congested = lastWasCongested || pending.withLock { $0.congested }
        let due = lastPublished + minimumInterval
        guard congested, DispatchTime.now().uptimeNanoseconds < due else { return drain() }
        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: due)) { self.drain() }
    }

    /// Writes the payload waiting, if any. On `queue`.
    private func drain() {
        let (waiting, congested) = pending.withLock { pending in
            defer { pending = (nil, false) }
            return pending
        }
        guard let payload = waiting else { return }
        lastPublished = DispatchTime.now().uptimeNanoseconds
        lastWasCongested = congested
        let bytes = Array(payload.json.utf8)
        let name = PayloadFileName.name(seq: payload.seq)
        let temp = "\(member).\(payload.seq).\(getpid()).tmp"
        do {
            try FileIO.publish(bytes, as: name, in: folder.handle, staging: folder.directory.staging, tempName: temp)
            metrics.payloadPublished()
        } catch {
            // A removed member folder is re-created by this member's
            // delivery (the one repair path, ``MemberFolder/repair()``);
            // until then peers read the history.
            metrics.payloadFailed()
            logger.info(
                "payload not published; peers will read the change from the history",
                metadata: ["seq": "\(payload.seq)", "error": "\(error.message)"])
        }
    }

    /// Publishes what waits now, and waits until everything handed over so
    /// far is published.
    func flush() {
        queue.sync { drain() }
    }

    /// Runs `body` on the publisher's queue after what is queued there (tests
    /// hold the queue with it to line up a congestion).
    func enqueue(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    /// Waits until what is queued now has run, without publishing what waits.
    func waitForQueue() {
        queue.sync {}
    }
}
