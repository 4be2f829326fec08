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
        let display = path
        return try await perform("fetch changes") { connection in
            let query = Result { try fetchQuery(zone, since: token, limit: limit) }
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
    private func fetchQuery(_ zone: CloudZone, since token: CloudChangeToken?, limit: Int) throws -> FetchQuery {
        if zone.scope == .private, zone.owner != user {
            throw CloudSyncError(
                .permissionDenied, "\(zone) is another user's private zone; \(user) may not read it from the remote \(path)")
        }
        let start = try FeedToken.start(of: token, in: zone, remote: path, faults: faults)
        return FetchQuery(zone: zone, user: user, start: start, limit: min(max(1, limit), Self.maxFetchLimit), display: path)
    }
}

/// One page of a zone's changes, read in one read transaction.
private struct FetchQuery: Sendable {
    var zone: CloudZone
    var user: String
    var start: FeedToken?
    var limit: Int
    var display: String

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
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT \(EmbeddedRemoteRecord.columns) FROM records
                    WHERE zone = ? AND seq > ? AND (deleted = 0 OR seq > ?)
                    ORDER BY seq LIMIT ?
                    """),
            arguments: [zone.description, position, floor, limit + 1]
        )
        let moreComing = rows.count > limit
        var changed: [CloudRecord] = []
        var deleted: [CloudRecordID] = []
        var last = position
        for row in rows.prefix(limit) {
            let stored = try EmbeddedRemoteRecord(row: row, display: display)
            if stored.deleted {
                deleted.append(stored.record.id)
            } else {
                changed.append(stored.record)
            }
            last = stored.seq
        }
        let next =
            moreComing
            ? FeedToken(epoch: epoch, position: last, floor: floor)
            : FeedToken(epoch: epoch, position: head, floor: head)
        return CloudChangeBatch(changed: changed, deleted: deleted, token: next.token, moreComing: moreComing)
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
