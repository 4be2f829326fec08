import Foundation
import GroupStore
import Synchronization

/// A stage of the bridge's work, as the benchmark's breakdown of the hop
/// through a remote sees it (``CloudSync/traceStages(_:)``).
package enum SyncStage: String, Sendable, CaseIterable {
    /// A save of this group reached the bridge (its member's did-save).
    case saveSeen = "save seen"
    /// The remote hinted at a change (push).
    case hintSeen = "hint seen"
    /// The remote answered a fetch with changes.
    case fetchAnswered = "fetch answered"
    /// Fetched changes were applied (committed locally).
    case applied
    /// An upload is about to go out (read, and recorded as sent).
    case uploadPrepared = "upload prepared"
    /// The remote answered an upload.
    case uploadAnswered = "upload answered"
    /// A sync began (after a wake-up: a save, a hint, the timer).
    case syncStarted = "sync started"
    /// A fetch call is about to go out.
    case fetchSent = "fetch sent"
    /// A fetched page is about to be applied (its transaction begins).
    case applyStarted = "apply started"
}

/// Calls a handler, if one is set, with each stage the bridge passes and
/// when (microseconds of wall-clock time, comparable across processes).
package final class SyncTracer: Sendable {
    private let handler = Mutex<(@Sendable (SyncStage, Double) -> Void)?>(nil)

    func set(_ handler: @escaping @Sendable (SyncStage, Double) -> Void) {
        self.handler.withLock { $0 = handler }
    }

    func mark(_ stage: SyncStage) {
        guard let handler = handler.withLock({ $0 }) else { return }
        handler(stage, DeliveryTrace.now())
    }
}

extension CloudSync {
    /// Calls `handler` (keep it short, on whatever thread the bridge is on)
    /// with each stage of the bridge's work. For the benchmark; not part of
    /// the public API.
    package func traceStages(_ handler: @escaping @Sendable (SyncStage, Double) -> Void) {
        tracer.set(handler)
    }
}
