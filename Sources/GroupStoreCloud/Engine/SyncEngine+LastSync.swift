import Foundation
import GRDB

extension SyncEngine {
    /// Ends a sync: records it in `last_sync` when it is due (something
    /// moved, a failure began or ended, or a second passed: a bridge idling
    /// on push hints does not write every time), with the count of what is
    /// pending and the tokens moved past echoes; and notes whether keys are
    /// left pending for the next sync. `idle`: the sync fetched and uploaded
    /// nothing (so the pending count is the last one).
    func recordLastSync(_ summary: inout CloudSyncSummary, failed: Bool, idle: Bool) {
        let moved = summary.uploaded + summary.fetched + summary.conflicts + summary.parked > 0
        var pending: Int?
        defer { state.lastSync.acknowledged = nil }
        if !failed, let acknowledged = state.lastSync.acknowledged, Self.sameCounts(acknowledged, summary) {
            // The sync's last acknowledgement wrote it, and nothing moved after.
            pending = acknowledged.pending
            state.lastSync.writtenAt = acknowledged.finishedAt
            state.lastSync.failed = false
        } else if state.lastSync.isDue(moved: moved, failed: failed, now: Date()) {
            let finished = summary
            let moved = state.moved
            pending = try? writeDatabase { db -> Int in
                var last = finished
                last.pending = try SyncState.pendingCount(db)
                try SyncState.setValue(db, "last_sync", last.stateJSON)
                try Self.store(moved, in: db)
                return last.pending
            }
            if pending != nil {
                state.stored(moved)
                state.lastSync.writtenAt = Date()
                state.lastSync.failed = failed
            }
        }
        if pending == nil {
            if idle, !failed, let known = state.lastSync.pending {
                pending = known
            } else {
                pending = try? readDatabase { try SyncState.pendingCount($0) }
            }
        }
        if let pending { summary.pending = pending }
        state.lastSync.pending = failed ? nil : pending
        state.record(.syncEnded(pending: pending, failed: failed))
    }

    /// Whether two summaries of one sync count the same work.
    private static func sameCounts(_ a: CloudSyncSummary, _ b: CloudSyncSummary) -> Bool {
        (a.uploaded, a.fetched, a.conflicts, a.parked) == (b.uploaded, b.fetched, b.conflicts, b.parked)
    }
}
