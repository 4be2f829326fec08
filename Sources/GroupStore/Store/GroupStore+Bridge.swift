import GRDB
import Synchronization

extension GroupStore {
    /// For the cloud bridge (same package): what the open write transaction
    /// of ``write(_:)`` changed so far, folded as a ``Save`` folds it —
    /// including what the writes caused (foreign-key cascades, triggers).
    ///
    /// The fold is kept for the seal of the same transaction, which uses it
    /// instead of folding the same rows again when nothing was written after
    /// it (``OpenTransactionFold``).
    package func openTransactionChanges(_ db: Database) throws -> [EntityChange] {
        let state = try HistorySchema.state(db)
        guard state.unsealedChanges else { return [] }
        let names = try bridgeRegistry { names in names = try names.current(db, version: state.registryVersion) }
        let fold = try HistoryReader.folded(db, after: state.sealedChange, through: state.newestChange, names: names)
        openFold.withLock {
            $0 = OpenTransactionFold(
                after: state.sealedChange, through: state.newestChange, registryVersion: state.registryVersion, changes: fold.changes,
                rows: fold.rows)
        }
        return fold.changes
    }

    /// The registry kept for the bridge's reads, after `update` brought it
    /// up to date (reloaded only when the registry changed).
    private func bridgeRegistry(_ update: (inout TableNames) throws -> Void) throws -> TableNames {
        var names = bridgeNames.withLock { $0 }
        try update(&names)
        bridgeNames.withLock { [names] in $0 = names }
        return names
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
    /// whoever wrote them, as the saves a running member would be
    /// delivered, read in a transaction of the caller's. Its one-shot sync,
    /// whose store is never started and so delivers nothing, takes these in;
    /// a running bridge takes its member's delivered saves in, and reads
    /// here only to date edits committed after what it took in when an
    /// upload runs ahead of delivery.
    package func historyIntake(_ db: Database, after seq: Int64, limit: Int) throws -> HistoryIntakePage {
        var batch = HistoryBatch()
        _ = try bridgeRegistry { names in batch = try HistoryReader.read(db, after: seq, limit: limit, names: &names) }
        return HistoryIntakePage(
            saves: batch.saves, through: batch.saves.last?.seq ?? seq, prunedThrough: batch.prunedThrough, hasMore: batch.hasMore)
    }
}

extension GroupStore {
    /// For the cloud bridge (same package): how far this member's
    /// subscribers have processed the saves (the saves not given to them,
    /// out of scope or its own, count as processed).
    package var processedThrough: Int64 { feedProcessedThrough }

    /// For the cloud bridge (same package): whether a transaction of
    /// another author than `member`, or changes no transaction closes yet,
    /// follow `seq` in the history, read in the caller's transaction.
    package func hasChanges(_ db: Database, after seq: Int64, byOtherThan member: MemberName) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: Self.foreignChangesSQL), arguments: [seq, member.rawValue]) ?? true
    }

    /// For the cloud bridge (same package): the id of the history's latest
    /// change (in the sequence numbers' space), read in the caller's transaction.
    package func historyHead(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(id), 0) FROM \(HistorySchema.changeTable)")) ?? 0
    }

    private static let foreignChangesSQL = """
        SELECT EXISTS (SELECT 1 FROM \(HistorySchema.changeTable)
                       WHERE id > ?1 AND op = \(HistorySchema.markerOperation) AND (key IS NULL OR key <> ?2))
            OR (SELECT max(id) FROM \(HistorySchema.changeTable)) > (\(HistorySchema.lastSeqSQL))
        """
}

extension GroupInspector {
    /// For the cloud bridge's status (same package): the group's database.
    package var databasePool: DatabasePool { pool }
}
