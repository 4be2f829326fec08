import Foundation

/// What the bridge reports while it runs (``CloudSync/events()``).
public enum CloudSyncEvent: Sendable, CustomStringConvertible {
    /// Another process is this group's syncing member; this one waits and
    /// takes over when it ends.
    case standby(holder: String)
    /// This process became the group's syncing member.
    case active
    /// A sync began (`complete`: a full resync was asked for).
    case started(complete: Bool)
    /// Local changes accepted by the remote.
    case uploaded(count: Int)
    /// Remote changes applied locally.
    case fetched(count: Int)
    /// A conflict and how the policy settled it.
    case conflict(table: String, record: String, outcome: CloudConflictOutcome)
    /// A record set aside: it is reported and kept, never dropped (a
    /// conflict that did not settle, a change the remote refused, a record
    /// whose parent has not arrived).
    case parked(table: String, record: String, reason: String)
    /// A shared zone this group no longer syncs: no longer shared with
    /// this user, or no longer the group's ``CloudSyncConfiguration/sharedZone``.
    /// `records` of its records left the group; those with edits not
    /// uploaded stayed (see `reason` for why the zone was left).
    case zoneLeft(zone: CloudZone, records: Int, reason: String)
    /// The remote is not the one this group synced with (replaced by a
    /// fresh one), or went back in time (restored from an older copy): the
    /// bridge lists it again, prepares its record types again and uploads
    /// what it lacks or forgot, before anything else.
    case remoteReset(CloudRemoteReset)
    /// A record of the remote has a field for a column the table here lacks
    /// (a column added or renamed in another group, or dropped here): its
    /// values stay on the remote, and are not applied here. Said once per
    /// table and column.
    case schemaDrift(table: String, column: String)
    /// `count` rows of `table` left this group's subscription (changed
    /// elsewhere, or written here outside it) and were removed here, as
    /// rows this group no longer holds, not as deletes.
    case movedOut(table: String, count: Int)
    /// A sync ended; ``CloudSyncSummary/error`` says whether it failed.
    case finished(CloudSyncSummary)

    public var description: String {
        switch self {
        case .standby(let holder): return "standby (syncing member: \(holder))"
        case .active: return "active"
        case .started(let complete): return complete ? "started (complete)" : "started"
        case .uploaded(let count): return "uploaded \(count)"
        case .fetched(let count): return "fetched \(count)"
        case .conflict(let table, let record, let outcome): return "conflict \(table)/\(record): \(outcome.rawValue)"
        case .parked(let table, let record, let reason): return "parked \(table)/\(record): \(reason)"
        case .zoneLeft(let zone, let records, let reason): return "left \(zone) (\(records) records): \(reason)"
        case .remoteReset(let reset): return "remote \(reset.kind.rawValue): \(reset.message)"
        case .schemaDrift(let table, let column):
            return "schema drift: the remote's \(table) records have column \(column), which table \(table) here lacks"
        case .movedOut(let table, let count): return "moved out of the subscription: \(count) rows of \(table)"
        case .finished(let summary): return "finished: \(summary)"
        }
    }
}

/// One sync's outcome.
public struct CloudSyncSummary: Sendable, Codable, Hashable, CustomStringConvertible {
    public var startedAt: Date
    public var finishedAt: Date
    public var uploaded: Int = 0
    public var fetched: Int = 0
    public var conflicts: Int = 0
    public var parked: Int = 0
    /// Local changes still to upload.
    public var pending: Int = 0
    /// Why it failed, if it did (one line).
    public var error: String?
    /// The failure's code, if it failed (``CloudSyncError/Code``).
    public var errorCode: String?

    public init(startedAt: Date, finishedAt: Date) {
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }

    public var description: String {
        let base = "uploaded \(uploaded), fetched \(fetched), conflicts \(conflicts), parked \(parked), pending \(pending)"
        return error.map { "\(base); failed: \($0)" } ?? base
    }
}

extension Notification.Name {
    /// Posted when a sync starts; `object` is the ``CloudSync``.
    public static let cloudSyncDidStart = Notification.Name("GroupStoreCloudSyncDidStart")
    /// Posted when a sync finishes; `userInfo["summary"]` is the
    /// ``CloudSyncSummary`` and `userInfo["error"]` the ``CloudSyncError``
    /// when it failed.
    public static let cloudSyncDidFinish = Notification.Name("GroupStoreCloudSyncDidFinish")
}
