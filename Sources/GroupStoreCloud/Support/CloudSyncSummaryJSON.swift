import Foundation
import GroupStore

extension CloudSyncSummary {
    /// The summary as stored in the sync state (`last_sync`): the JSON
    /// `JSONEncoder` writes for it with sorted keys and dates as Unix
    /// seconds, written by hand (a sync that moves records stores one, and
    /// Foundation's encoder cost more than the rest of such a sync's
    /// bookkeeping). Read back with ``SyncState/decode(_:json:)``.
    var stateJSON: String {
        func seconds(_ date: Date) -> String {
            let value = date.timeIntervalSince1970
            return value.isFinite ? "\(value)" : "0"
        }
        var out = "{\"conflicts\":\(conflicts)"
        if let error { out += ",\"error\":" + JSONText.string(error) }
        if let errorCode { out += ",\"errorCode\":" + JSONText.string(errorCode) }
        out += ",\"fetched\":\(fetched),\"finishedAt\":\(seconds(finishedAt)),\"parked\":\(parked),\"pending\":\(pending)"
        out += ",\"startedAt\":\(seconds(startedAt)),\"uploaded\":\(uploaded)}"
        return out
    }
}
