import Foundation
import GRDB

/// Committed transactions read from the history, after a cursor.
struct HistoryBatch: Sendable {
    /// Transactions, in sequence order.
    var saves: [Save] = []
    /// Changes a writer outside the library committed follow the last
    /// transaction: they must be closed into a transaction (under the write
    /// lock) before they are delivered.
    var hasOpenChanges = false
    /// Transactions up to here were pruned.
    var prunedThrough: Int64 = 0
    /// The last change id of the last transaction read (or of the cursor's).
    var lastChange: Int64 = 0
    /// More transactions follow the ones read.
    var hasMore = false
}

/// Reads the history tables into ``Save`` values.
enum HistoryReader {
    /// Figures of the history a caller read in the same snapshot.
    struct Known {
        var prunedThrough: Int64
        var newestChange: Int64
        var registryVersion: Int64
    }

    /// Reads up to `limit` transactions after `cursor`, with their changes.
    ///
    /// - Parameter cursorLastChange: the last change id of the cursor's
    ///   transaction, when the caller knows it (saves a query).
    /// - Parameter names: the table registry as last read (reloaded here if
    ///   it changed).
    /// - Parameter known: the history's figures, when the caller read them in
    ///   this snapshot already (saves three queries).
    static func read(
        _ db: Database, after cursor: Int64, cursorLastChange: Int64? = nil, limit: Int, names: inout TableNames,
        known: Known? = nil
    ) throws -> HistoryBatch {
        var batch = HistoryBatch()
        // The cursor's transaction ends where the next one's changes start.
        var sealedUpTo: Int64
        if let cursorLastChange {
            sealedUpTo = cursorLastChange
        } else {
            sealedUpTo =
                try Int64.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT last_change FROM \(HistorySchema.transactionTable) WHERE seq <= ? ORDER BY seq DESC LIMIT 1"),
                    arguments: [cursor]) ?? 0
        }
        let heads = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT seq, author, committed_at, last_change FROM \(HistorySchema.transactionTable)
                    WHERE seq > ? ORDER BY seq LIMIT ?
                    """),
            arguments: [cursor, limit + 1])
        var transactions: [(seq: Int64, author: String, committedAt: Date, lastChange: Int64)] = []
        while let row = try heads.next() {
            if transactions.count == limit {
                batch.hasMore = true
                break
            }
            let author: String? = row[1]
            transactions.append((row[0], author ?? Save.externalAuthor, Date(timeIntervalSince1970: row[2]), row[3]))
        }
        // Read every time (one lookup): pruning, or an upgrade from format 1
        // that dropped unreadable history, may leave transactions whose changes
        // are gone, so consecutive numbers do not prove nothing was lost.
        batch.prunedThrough = try known?.prunedThrough ?? HistorySchema.prunedThrough(db)
        let lowerBound = sealedUpTo
        if let last = transactions.last { sealedUpTo = last.lastChange }
        batch.lastChange = sealedUpTo
        if !batch.hasMore {
            let newestChange =
                try known?.newestChange
                ?? Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM \(HistorySchema.changeTable)")) ?? 0
            batch.hasOpenChanges = newestChange > sealedUpTo
        }
        guard !transactions.isEmpty else { return batch }

        names = try known.map { try names.current(db, version: $0.registryVersion) } ?? names.current(db)
        var accumulators = transactions.map { _ in ChangeAccumulator() }
        var index = 0
        try forEachChange(db, after: lowerBound, through: sealedUpTo, names: names) { id, entity, operation, key in
            while index < transactions.count - 1 && id > transactions[index].lastChange { index += 1 }
            if operation == .reset {
                accumulators[index].reset(entity: entity)
            } else {
                accumulators[index].add(entity: entity, operation: operation, key: key)
            }
        }
        batch.saves = zip(transactions, accumulators).map { head, accumulator in
            Save(seq: head.seq, author: head.author, committedAt: head.committedAt, changes: accumulator.changes)
        }
        return batch
    }

    /// Calls `body` with each change (a reset with the table's name and a
    /// `.null` key) whose id is in `(after, through]`, in id order.
    private static func forEachChange(
        _ db: Database, after: Int64, through: Int64, names: TableNames,
        _ body: (Int64, String, HistorySchema.Operation, KeyValue) throws -> Void
    ) throws {
        // Text keys are read as bytes: invalid UTF-8 and NUL bytes survive.
        let changes = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT id, entity, op, CASE typeof(key) WHEN 'text' THEN CAST(key AS BLOB) ELSE key END, typeof(key) = 'text', rid
                    FROM \(HistorySchema.changeTable) WHERE id > ? AND id <= ? ORDER BY id
                    """),
            arguments: [after, through])
        while let row = try changes.next() {
            let id: Int64 = row[0]
            // Pending (5) and placeholder (0) rows are not changes.
            guard let operation = HistorySchema.Operation(rawValue: row[2]) else { continue }
            let value: DatabaseValue = row[3]
            if operation == .reset {
                if case .blob(let data) = value.storage { try body(id, String(decoding: data, as: UTF8.self), .reset, .null) }
                continue
            }
            guard let table = names[row[1]] else { continue }
            let key: KeyValue
            if let rowid = row[5] as Int64? {
                key = .rowid(rowid)
            } else {
                key = keyValue(value, isText: row[4], composite: table.composite)
            }
            try body(id, table.name, operation, key)
        }
    }

    /// What the open write transaction changed so far (the changes after the
    /// newest sealed transaction), folded as a save folds them.
    static func openChanges(_ db: Database) throws -> [EntityChange] {
        let state = try HistorySchema.state(db)
        guard state.unsealedChanges else { return [] }
        return try folded(db, after: state.sealedChange, through: state.newestChange, names: try TableNames.load(db))
    }

    /// The changes whose ids are in `(after, through]`, folded as one save.
    static func folded(_ db: Database, after: Int64, through: Int64, names: TableNames) throws -> [EntityChange] {
        var accumulator = ChangeAccumulator()
        try forEachChange(db, after: after, through: through, names: names) { _, entity, operation, key in
            if operation == .reset { accumulator.reset(entity: entity) } else { accumulator.add(entity: entity, operation: operation, key: key) }
        }
        return accumulator.changes
    }

    /// A stored key: `isText` says the bytes of `value` were text.
    static func keyValue(_ value: DatabaseValue, isText: Bool, composite: Bool) -> KeyValue {
        switch value.storage {
        case .int64(let integer): return .integer(integer)
        case .double(let double): return .real(double)
        case .string(let text): return .text(text)
        case .blob(let data):
            let bytes = [UInt8](data)
            guard isText else { return .blob(bytes) }
            if composite, let key = CompositeKey.decode(bytes) { return key }
            return .text(bytes: bytes)
        case .null: return .null
        }
    }
}


