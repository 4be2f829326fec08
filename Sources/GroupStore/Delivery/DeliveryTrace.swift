import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// When one save passed each stage of its way into this member, in
/// microseconds of wall-clock time (comparable with ``Save/committedAt``
/// across processes): for the benchmark's stage-by-stage breakdown.
package struct DeliveryTrace: Sendable {
    /// What woke the member.
    package enum Wake: String, Sendable {
        /// The database's `-wal` file was written (by any writer).
        case wal
        /// A peer's payload file was renamed in.
        case payload
        /// A member folder appeared, or the inotify queue overflowed.
        case group
        /// A timer: the recheck after an early `-wal` wake-up, or the safety tick.
        case timer
        /// The merge before had more to read than one round takes.
        case backlog
    }

    package var seq: Int64
    package var wake: Wake
    /// The first wake-up since the previous delivery.
    package var wokeAt: Double
    /// The start of the merge round that read the save.
    package var mergeStartedAt: Double
    /// The history read, its read transaction ended.
    package var historyReadAt: Double
    /// Handed to the subscribers' feed and the notifier.
    package var handedOverAt: Double
    /// This process's GRDB observers notified (after the hand-over).
    package var observersNotifiedAt: Double

    /// Wall-clock time in microseconds, the clock of every stage trace
    /// (this one and the cloud bridge's).
    package static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) * 1e6 + Double(time.tv_nsec) / 1e3
    }
}

extension GroupStore {
    /// Calls `handler` on the delivery's queue for every save this member
    /// merges, with when it passed each stage (keep it short). For the
    /// benchmark; not part of the public API.
    package func traceDeliveries(_ handler: @escaping @Sendable (DeliveryTrace) -> Void) {
        delivery.tracer.withLock { $0 = handler }
    }
}
