import Foundation
import GRDB
import GroupStore

/// What `groupstore cloud status` shows: whether a syncing member is live,
/// what waits to be uploaded, what is parked, and the last sync.
public struct CloudSyncStatus: Sendable, Codable, Hashable {
    /// A record set aside, with why.
    public struct Parked: Sendable, Codable, Hashable {
        public var table: String
        public var record: String
        /// `up` (an upload) or `down` (a fetched record waiting for its parent).
        public var direction: String
        public var reason: String
    }

    public var group: String
    /// A process is the group's syncing member now.
    public var live: Bool
    /// The user the group syncs as, once it has synced.
    public var account: String?
    /// Local changes taken in and not uploaded yet (parked ones not counted).
    public var pending: Int
    /// Transactions committed by others than the bridge after the last
    /// local save it took in (every table's; those of synced tables become
    /// pending at the next sync). A running bridge is delivered only saves
    /// of synced tables, so transactions of other tables committed after its
    /// last one stay counted here until a save of a synced table comes.
    public var transactionsNotTakenIn: Int
    public var parked: Int
    /// Conflicts settled so far.
    public var conflicts: Int
    public var lastSync: CloudSyncSummary?
    public var parkedRecords: [Parked]
    /// The last time the remote was found replaced or restored, if ever.
    public var remoteReset: CloudRemoteReset?
    /// A column the remote's records of a synced table have and the table
    /// here lacks: its values stay on the remote and are not applied here.
    public struct Drift: Sendable, Codable, Hashable {
        public var table: String
        public var column: String
        /// When a record with it was first seen.
        public var seenAt: Date
    }

    /// Columns of the remote's records the synced tables here lack.
    public var schemaDrift: [Drift] = []

    /// A table's subscription as last synced, and the synced rows of it held here.
    public struct Subscription: Sendable, Codable, Hashable {
        /// The table, in lower case.
        public var table: String
        /// The filter, its parameters bound (``CloudFilter/canonical``).
        public var filter: String
        public var rows: Int
    }

    /// The subscribed tables (the others sync whole).
    public var subscriptions: [Subscription] = []

    /// Reads the status of the group at `group` (never synced: all zero).
    public static func read(group: String, member: MemberName? = nil) throws -> CloudSyncStatus {
        let inspector: GroupInspector
        do {
            inspector = try GroupInspector(directory: group)
        } catch {
            throw CloudSyncError(.store, "cannot read group \(group): \(error)", underlying: error)
        }
        let name = member?.rawValue ?? "cloud"
        let live = (try? inspector.status().members.contains { $0.name == name && $0.live }) ?? false
        do {
            return try inspector.databasePool.read { db in
                var status = CloudSyncStatus(
                    group: group, live: live, account: nil, pending: 0, transactionsNotTakenIn: 0, parked: 0, conflicts: 0, lastSync: nil,
                    parkedRecords: [], remoteReset: nil)
                guard try SyncState.exists(db) else { return status }
                status.transactionsNotTakenIn =
                    try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM groupstore_transaction WHERE seq > ? AND coalesce(author, '') <> ?",
                        arguments: [try SyncState.intakePosition(db), name]) ?? 0
                let counts = try SyncState.counts(db)
                status.pending = counts.pending
                status.parked = counts.parked
                status.conflicts = counts.conflicts
                status.account = String.fromDatabaseValue(try SyncState.value(db, "account"))
                status.lastSync = counts.lastSync.flatMap { SyncState.decode(CloudSyncSummary.self, json: $0) }
                status.parkedRecords = try Row.fetchAll(
                    db, sql: "SELECT entity, name, direction, reason FROM \(SyncState.parked) ORDER BY parked_at LIMIT 100"
                ).map { Parked(table: $0[0], record: $0[1], direction: $0[2], reason: $0[3]) }
                status.subscriptions = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT substr(key, 14), value, (SELECT count(*) FROM \(SyncState.record) WHERE lower(entity) = substr(key, 14))
                        FROM \(SyncState.meta) WHERE key LIKE 'subscription:%' AND value IS NOT NULL ORDER BY key
                        """
                ).map { Subscription(table: $0[0], filter: $0[1], rows: $0[2]) }
                if try db.tableExists(SyncState.drift) {
                    status.remoteReset = try SyncState.remoteReset(db)
                    status.schemaDrift = try SyncState.drifts(db).map { Drift(table: $0.table, column: $0.column, seenAt: $0.seenAt) }
                }
                return status
            }
        } catch {
            throw CloudSyncError(.store, "cannot read the sync state of group \(group): \(error)", underlying: error)
        }
    }
}
