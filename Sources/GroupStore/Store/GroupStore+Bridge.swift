import GRDB

extension GroupStore {
    /// For the cloud bridge (same package): what the open write transaction
    /// of ``write(_:)`` changed so far, folded as a ``Save`` folds it —
    /// including what the writes caused (foreign-key cascades, triggers).
    package static func openTransactionChanges(_ db: Database) throws -> [EntityChange] {
        try HistoryReader.openChanges(db)
    }
}

/// A page of the history as the cloud bridge takes it in.
package struct HistoryIntakePage: Sendable {
    /// Closed transactions after the position asked for (every author).
    package var saves: [Save]
    /// The last sequence number read (the position to ask from next).
    package var through: Int64
    /// Transactions up to here were pruned: if past the position asked for,
    /// what changed there can no longer be listed.
    package var prunedThrough: Int64
    /// More transactions follow.
    package var hasMore: Bool
}

extension GroupStore {
    /// For the cloud bridge (same package): closed transactions after `seq`,
    /// whoever wrote them, read in a transaction of the caller's (a write's,
    /// so that nothing can commit between reading the history and what the
    /// caller does next).
    package static func historyIntake(_ db: Database, after seq: Int64, limit: Int) throws -> HistoryIntakePage {
        var names = try TableNames.load(db)
        let batch = try HistoryReader.read(db, after: seq, limit: limit, names: &names)
        return HistoryIntakePage(
            saves: batch.saves, through: batch.saves.last?.seq ?? seq, prunedThrough: batch.prunedThrough, hasMore: batch.hasMore)
    }
}

extension GroupInspector {
    /// For the cloud bridge's status (same package): the group's database.
    package var databasePool: DatabasePool { pool }
}
