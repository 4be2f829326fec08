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
        if state.lastSync.isDue(moved: moved, failed: failed, now: Date()) {
            let finished = summary
            let unsaved = state.tokens.unsaved
            let seen = state.remoteSeenUnsaved ? state.remoteSeen : nil
            pending = try? writeDatabase { db -> Int in
                var last = finished
                last.pending = try SyncState.pendingCount(db)
                try SyncState.setValue(db, "last_sync", last.stateJSON)
                for (zone, token) in unsaved { try SyncState.setToken(db, zone: zone, token) }
                if let seen { try SyncState.setRemoteSeen(db, seen) }
                return last.pending
            }
            if pending != nil {
                if seen != nil, state.remoteSeen == seen { state.remoteSeenUnsaved = false }
                for (zone, token) in unsaved where state.tokens.unsaved[zone] == token { state.tokens.unsaved[zone] = nil }
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
        if failed || pending != 0 { state.reasons.insert(.pendingLeft) } else { state.reasons.remove(.pendingLeft) }
    }
}
