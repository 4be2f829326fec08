import Foundation
import GRDB
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// What one pruning pass removed.
public struct PruneReport: Hashable, Sendable {
    /// Transactions up to this sequence number are gone from the history.
    public var prunedThrough: Int64
    /// History transactions removed in this pass.
    public var transactionsRemoved: Int
    /// History change rows removed in this pass.
    public var changesRemoved: Int
    /// Payload files removed from member folders.
    public var payloadFilesRemoved: Int
    /// Stale temporary files removed from `tmp/`.
    public var temporaryFilesRemoved: Int
    /// The members whose cursors kept this pass from pruning further (those
    /// with the lowest cursor, when it is behind the head and the retention
    /// has not run out for what they hold). Retire a member that is gone for
    /// good with `groupstore retire`.
    public var heldBackBy: [Holder] = []

    /// A member holding back pruning, and where its cursor is.
    public struct Holder: Hashable, Sendable {
        public var member: String
        public var cursor: Int64
    }
}

/// Bounds the disk: removes history and payload files that every member has
/// consumed, and anything older than the retention whoever still wants it.
///
/// The horizon is the lowest cursor of all members that have one, live or
/// dead, raised to the newest transaction older than the retention. So a dead
/// member pins nothing for longer than the retention; a member left behind
/// gets a ``Save/Kind/resync`` when it comes back.
struct Pruner: Sendable {
    /// Temporary files older than this are left-overs of a crashed writer.
    static let staleTemporaryAge: TimeInterval = 3600

    let pool: DatabasePool
    let directory: GroupDirectory
    let retention: TimeInterval
    let logger: Logger

    func prune(now: Date = Date()) throws -> PruneReport {
        // Members that only write have no cursor and hold nothing back.
        let cursors = try directory.memberNames().compactMap { name -> (String, Int64)? in
            guard let folder = try? directory.memberFolder(name, create: false), let cursor = CursorFile.read(in: folder)?.seq
            else { return nil }
            return (name.rawValue, cursor)
        }
        let cutoff = now.timeIntervalSince1970 - retention
        let report = try pool.write { db -> PruneReport in
            let previous = try HistorySchema.prunedThrough(db)
            // A member behind what was pruned resyncs when it comes back,
            // whatever is pruned meanwhile: it holds nothing back.
            let pinning = cursors.filter { $0.1 >= previous }
            let consumed = pinning.map(\.1).min() ?? Int64.max
            // The newest transaction committed before the cutoff: the marker
            // before the first one after it (walking on from what was pruned,
            // so each row is looked at about once in its life).
            let expired =
                try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT coalesce(max(id), 0) FROM \(HistorySchema.changeTable) WHERE op = \(HistorySchema.markerOperation)
                        AND id > ? AND id < coalesce((
                          SELECT id FROM \(HistorySchema.changeTable) WHERE id > ? AND op = \(HistorySchema.markerOperation) AND rid >= ?
                          ORDER BY id LIMIT 1), 9223372036854775807)
                        """,
                    arguments: [previous, previous, HistorySchema.microseconds(Date(timeIntervalSince1970: cutoff))]) ?? 0
            let head = try HistorySchema.lastSeq(db)
            // A transaction is pruned whole: a cursor need not be a marker's
            // id (a position just before the next save), so the horizon is
            // the newest marker at or before it.
            let horizon = try HistorySchema.markerAtOrBefore(db, min(max(consumed, expired), head))
            var report = PruneReport(
                prunedThrough: max(previous, horizon), transactionsRemoved: 0, changesRemoved: 0, payloadFilesRemoved: 0,
                temporaryFilesRemoved: 0)
            if consumed < head && consumed >= expired {
                report.heldBackBy = pinning.filter { $0.1 == consumed }.map { PruneReport.Holder(member: $0.0, cursor: $0.1) }
            }
            guard horizon > previous else { return report }
            // Changes are stored in commit order, each transaction's ending
            // with its marker: everything up to the horizon's marker goes, but
            // for the newest row (ids, so sequence numbers, continue from the
            // largest one left, and must never go back).
            let removing = "FROM \(HistorySchema.changeTable) WHERE id <= ? AND id < (SELECT max(id) FROM \(HistorySchema.changeTable))"
            if let counts = try Row.fetchOne(
                db, sql: "SELECT count(*) FILTER (WHERE op = \(HistorySchema.markerOperation)), count(*) \(removing)", arguments: [horizon])
            {
                report.transactionsRemoved = counts[0]
                report.changesRemoved = counts[1] - report.transactionsRemoved
            }
            try db.execute(sql: "DELETE \(removing)", arguments: [horizon])
            try HistorySchema.setPrunedThrough(db, horizon)
            return report
        }
        var result = report
        result.payloadFilesRemoved = removePayloads(through: report.prunedThrough)
        result.temporaryFilesRemoved = removeStaleTemporaries(now: now)
        if result.transactionsRemoved + result.payloadFilesRemoved + result.temporaryFilesRemoved > 0 {
            logger.info(
                "pruned",
                metadata: [
                    "prunedThrough": "\(result.prunedThrough)", "transactions": "\(result.transactionsRemoved)",
                    "payloads": "\(result.payloadFilesRemoved)",
                ])
        }
        return result
    }

    /// Removes payload files of every member up to `seq`, as the folders
    /// are read: a folder of a million payloads (a member that fell far
    /// behind) is never held in memory as a list of names.
    private func removePayloads(through seq: Int64) -> Int {
        var removed = 0
        guard let names = try? directory.memberNames() else { return 0 }
        for name in names {
            guard let folder = try? directory.memberFolder(name, create: false) else { continue }
            try? folder.forEachEntry { entry in
                if case .payload(let payloadSeq, _) = PayloadFileName.parse(entry), payloadSeq <= seq,
                    (try? folder.removeFile(entry)) != nil
                {
                    removed += 1
                }
            }
        }
        return removed
    }

    private func removeStaleTemporaries(now: Date) -> Int {
        guard let entries = try? directory.staging.entries() else { return 0 }
        var removed = 0
        for entry in entries where entry.hasSuffix(".tmp") {
            guard let info = try? directory.staging.status(of: entry), (info.st_mode & S_IFMT) == S_IFREG else { continue }
            if now.timeIntervalSince1970 - TimeInterval(info.st_mtim.tv_sec) > Self.staleTemporaryAge,
                (try? directory.staging.removeFile(entry)) != nil
            {
                removed += 1
            }
        }
        return removed
    }
}
