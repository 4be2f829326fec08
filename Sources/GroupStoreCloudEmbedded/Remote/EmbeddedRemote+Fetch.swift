import Foundation
import GRDB
import GroupStoreCloud

extension EmbeddedRemote {
    /// The most records one page of ``fetchChanges(in:since:limit:)`` holds,
    /// whatever limit is asked for.
    public static let maxFetchLimit = 100_000

    /// The changes of `zone` after `token`, at most `limit` records a page
    /// (and at most ``maxFetchLimit``).
    ///
    /// With no token: every live record of the zone (no deletions), then the
    /// token of the log head. With a token: each record changed since, once,
    /// in its latest state (live: in `changed`; deleted: in `deleted`), in
    /// change order. `moreComing` says to fetch again from the new token.
    ///
    /// - Throws: ``CloudSyncError/Code/permissionDenied`` for another user's
    ///   private zone or a shared zone not shared with this user;
    ///   ``CloudSyncError/Code/tokenExpired`` for a token of another remote file (recreated or restored), from before the pruned
    ///   horizon (``compactLog(keepingLast:)``), ahead of the log, or unreadable.
    public func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
        guard let batch = try await fetchChanges(in: zone, since: token, limit: limit, keeping: nil).value else {
            preconditionFailure("no mark asked about is always kept")
        }
        return batch
    }

    /// ``fetchChanges(in:since:limit:)`` in the same read transaction as the
    /// check of `mark` (the token is not looked at when the file no longer
    /// keeps it).
    public func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        try await fetchChanges(in: zone, since: token, limit: limit, keeping: mark, subscription: CloudSubscription())
    }

    /// ``fetchChanges(in:since:limit:keeping:)`` narrowed to `subscription`,
    /// evaluated by SQLite on the records' fields (see ``CloudSubscription``):
    /// the first change-log entry after the token keeps what the record held
    /// then (`previous`, format 4), so a record that left the subset is told
    /// apart from one that was never in it.
    public func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?, subscription: CloudSubscription
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        let display = path
        try subscription.refusingClaims(on: "the remote \(path)")
        return try await perform("fetch changes") { connection in
            let query = Result { try fetchQuery(zone, since: token, limit: limit, subscription: subscription) }
            return try await connection.read { db in
                let epoch = try Self.epoch(db, display: display)
                let (head, keeps) = try EmbeddedRemoteSchema.history(db, epoch: epoch, keeping: mark)
                let history = CloudRemoteHistory(head: head, keepsMark: keeps, now: Date())
                guard keeps else { return CloudHistoryChecked(value: nil, history: history) }
                return CloudHistoryChecked(value: try query.get().run(db), history: history)
            }
        }
    }

    /// The read of a fetch, once the zone and the token are checked.
    private func fetchQuery(_ zone: CloudZone, since token: CloudChangeToken?, limit: Int, subscription: CloudSubscription) throws
        -> FetchQuery
    {
        if zone.scope == .private, zone.owner != user {
            throw CloudSyncError(
                .permissionDenied, "\(zone) is another user's private zone; \(user) may not read it from the remote \(path)")
        }
        let start = try FeedToken.start(of: token, in: zone, remote: path, faults: faults)
        return FetchQuery(
            zone: zone, user: user, start: start, limit: min(max(1, limit), Self.maxFetchLimit), display: path, subscription: subscription)
    }

    /// Of these records, those live, readable by this user and in
    /// `subscription`'s subset (see ``CloudDatabase/selected(_:subscription:)``).
    public func selected(_ ids: [CloudRecordID], subscription: CloudSubscription) async throws -> Set<CloudRecordID> {
        let (user, display) = (self.user, path)
        try subscription.refusingClaims(on: "the remote \(path)")
        return try await perform("select records") { connection in
            try await connection.read { db in
                let types = try Self.recordTypesWithColumns(db, display: display)
                let match = try RecordFilterSQL.matches(
                    fields: "CASE WHEN deleted = 0 THEN fields END", type: "type", name: "name", subscription: subscription, types: types)
                let statement = try db.cachedStatement(
                    sql: "SELECT \(match) FROM records WHERE zone = ? AND type = ? COLLATE NOCASE AND name = ?")
                var selected = Set<CloudRecordID>()
                for id in ids {
                    switch id.zone.scope {
                    case .private where id.zone.owner != user: continue
                    case .shared where try Self.access(db, to: id.zone, user: user) == nil: continue
                    default: break
                    }
                    if try Bool.fetchOne(statement, arguments: [id.zone.description, id.type, id.name]) == true { selected.insert(id) }
                }
                return selected
            }
        }
    }

    /// Every registered record type with its columns (for a subscription's filters).
    static func recordTypesWithColumns(_ db: Database, display: String) throws -> [CloudRecordType] {
        try Row.fetchAll(db, sql: "SELECT name, scope, columns FROM types").compactMap { row in
            let name = try row.decode(String.self, atIndex: 0)
            guard let scope = CloudScope(rawValue: try row.decode(String.self, atIndex: 1)) else { return nil }
            do {
                let columns = try JSONDecoder().decode([CloudColumn].self, from: Data(try row.decode(String.self, atIndex: 2).utf8))
                return CloudRecordType(name: name, scope: scope, columns: columns)
            } catch {
                throw CloudSyncError(
                    .badRemote, "the remote \(display) holds unreadable columns for the record type \(name)", underlying: error)
            }
        }
    }
}

/// One page of a zone's changes, read in one read transaction.
private struct FetchQuery: Sendable {
    var zone: CloudZone
    var user: String
    var start: FeedToken?
    var limit: Int
    var display: String
    var subscription: CloudSubscription

    func run(_ db: Database) throws -> CloudChangeBatch {
        if zone.scope == .shared, !CloudZone.isUserName(zone.owner) {
            throw CloudSyncError(
                .invalidConfiguration,
                "\(zone) cannot exist on the remote \(display): its owner \(String(reflecting: zone.owner)) is not a user name")
        }
        if zone.scope == .shared, try EmbeddedRemote.access(db, to: zone, user: user) == nil {
            throw CloudSyncError(.permissionDenied, "\(zone) is not shared with \(user) on the remote \(display)")
        }
        let meta = try EmbeddedRemoteSchema.meta(db)
        guard let epoch = meta["epoch"], !epoch.isEmpty else {
            throw CloudSyncError(.badRemote, "the remote \(display) has no epoch in its meta table")
        }
        let horizon = meta["horizon"].flatMap { Int64($0) } ?? 0
        let head = try EmbeddedRemoteSchema.head(db)
        let (position, floor) = try FeedToken.range(from: start, epoch: epoch, head: head, horizon: horizon, zone: zone, remote: display)
        let rows = try Row.fetchAll(db.cachedStatement(sql: try sql(db)), arguments: [position, zone.description, floor, limit + 1])
        let moreComing = rows.count > limit
        var changed: [CloudRecord] = []
        var deleted: [CloudRecordID] = []
        var movedOut: [CloudRecordID] = []
        var last = position
        for row in rows.prefix(limit) {
            let stored = try EmbeddedRemoteRecord(row: row, display: display)
            if stored.deleted {
                deleted.append(stored.record.id)
            } else if !subscription.isEmpty, row[10] as Int64? == 0 {
                movedOut.append(stored.record.id)
            } else {
                changed.append(stored.record)
            }
            last = stored.seq
        }
        let next =
            moreComing
            ? FeedToken(epoch: epoch, position: last, floor: floor)
            : FeedToken(epoch: epoch, position: head, floor: head)
        return CloudChangeBatch(changed: changed, deleted: deleted, movedOut: movedOut, token: next.token, moreComing: moreComing)
    }

    /// The page's query: `?1` the position, `?2` the zone, `?3` the floor,
    /// `?4` the limit. With a subscription, a subscribed type's record is
    /// read with what it held at the position (`previous` of its first
    /// change after it), and kept if it is in the subset now or was then;
    /// its eleventh column says whether it is in it now.
    private func sql(_ db: Database) throws -> String {
        let columns = EmbeddedRemoteRecord.columns
        guard !subscription.isEmpty else {
            return "SELECT \(columns) FROM records WHERE zone = ?2 AND seq > ?1 AND (deleted = 0 OR seq > ?3) ORDER BY seq LIMIT ?4"
        }
        let types = try EmbeddedRemote.recordTypesWithColumns(db, display: display)
        let subscribed = subscription.filters.keys.sorted().map(FilterSQL.quoted).joined(separator: ", ")
        let now = try RecordFilterSQL.matches(fields: "now_fields", type: "type", name: "name", subscription: subscription, types: types)
        let before = try RecordFilterSQL.matches(
            fields: "before_fields", type: "type", name: "name", subscription: subscription, types: types)
        return """
            SELECT \(columns), \(now) AS now_in, \(before) AS before_in FROM (
                SELECT \(columns), CASE WHEN deleted = 0 THEN fields END AS now_fields,
                    CASE WHEN lower(type) IN (\(subscribed)) THEN (
                        SELECT l.previous FROM change_log l
                        WHERE l.zone = records.zone AND l.type = records.type AND l.name = records.name AND l.seq > ?1
                        ORDER BY l.seq LIMIT 1) END AS before_fields
                FROM records WHERE zone = ?2 AND seq > ?1 AND (deleted = 0 OR seq > ?3))
            WHERE lower(type) NOT IN (\(subscribed)) OR now_in OR before_in
            ORDER BY seq LIMIT ?4
            """
    }
}

extension EmbeddedRemote {
    /// A tag names the change-log entry that issued it. The remote deleted
    /// the record since if that entry is its own (or was compacted away, at or
    /// below the horizon); it never issued the tag — it was replaced (another
    /// epoch) or restored from an older copy — if the entry is beyond the
    /// log's head or belongs to another record (numbers issued again after
    /// a restore).
    public func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> {
        try await perform("check records the listing lacks") { connection in
            let epoch = connection.epoch
            return try await connection.read { db -> Set<CloudRecordID> in
                let head = try EmbeddedRemoteSchema.head(db)
                let horizon = try EmbeddedRemoteSchema.meta(db)["horizon"].flatMap { Int64($0) } ?? 0
                let entry = try db.cachedStatement(sql: "SELECT zone, type, name, entry FROM change_log WHERE seq = ?")
                var forgotten = Set<CloudRecordID>()
                for (id, tag) in records {
                    let lost = try FeedToken.isForgotten(tag: tag, epoch: epoch, head: head, horizon: horizon) { seq, named in
                        try Row.fetchOne(entry, arguments: [seq]).map { row in
                            (row[0] as String?) == id.zone.description && (row[1] as String?)?.lowercased() == id.type.lowercased()
                                && (row[2] as String?) == id.name
                                && (named == nil || (row[3] as String?) == nil || (row[3] as String?) == named)
                        }
                    }
                    if lost { forgotten.insert(id) }
                }
                return forgotten
            }
        }
    }
}
