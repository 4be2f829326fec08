import Foundation
import GRDB
import GRDBSQLite

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
    /// - Parameter names: the table registry as last read (reloaded here if
    ///   it changed).
    /// - Parameter known: the history's figures, when the caller read them in
    ///   this snapshot already (saves two queries).
    /// - Parameter skippingAuthor: transactions of this author are listed
    ///   with no changes: their rows are not read (a member's own, which
    ///   nothing it does with a merge needs).
    static func read(
        _ db: Database, after cursor: Int64, limit: Int, names: inout TableNames, known: Known? = nil,
        skippingAuthor: String? = nil
    ) throws -> HistoryBatch {
        var batch = HistoryBatch()
        // A transaction's changes are the rows after the previous marker, up
        // to its own. The cursor says every transaction up to it is handled:
        // it is mostly a marker's id, but need not be (a subscriber's position
        // just before the next save), so the changes start after the newest
        // marker at or before it (found at once when it is one), or after
        // what was pruned (the cursor's marker itself may be gone; read every
        // time, so the caller sees a cursor behind it).
        batch.prunedThrough = try known?.prunedThrough ?? HistorySchema.prunedThrough(db)
        var lowerBound = try HistorySchema.markerAtOrBefore(db, cursor)
        if batch.prunedThrough <= cursor { lowerBound = max(lowerBound, batch.prunedThrough) }
        var transactions: [(seq: Int64, author: String, committedAt: Date)] = []
        do {
            let markers = try RawRows(
                db,
                sql:
                    "SELECT id, key, rid FROM \(HistorySchema.changeTable) WHERE id > ? AND op = \(HistorySchema.markerOperation) ORDER BY id LIMIT ?",
                cursor, Int64(limit) + 1)
            while try markers.next() {
                if transactions.count == limit {
                    batch.hasMore = true
                    break
                }
                transactions.append(
                    (markers.int64(0), markers.text(1) ?? Save.externalAuthor, HistorySchema.date(microseconds: markers.int64(2))))
            }
        }
        let sealedUpTo = transactions.last?.seq ?? cursor
        if !batch.hasMore {
            let newestChange: Int64
            if let known {
                newestChange = known.newestChange
            } else {
                let row = try RawRows(db, sql: "SELECT max(id) FROM \(HistorySchema.changeTable)")
                newestChange = try row.next() ? row.int64(0) : 0
            }
            batch.hasOpenChanges = newestChange > sealedUpTo
        }
        guard !transactions.isEmpty else { return batch }

        let folded = transactions.map { $0.author != skippingAuthor }
        if folded.contains(true) {
            names = try known.map { try names.current(db, version: $0.registryVersion) } ?? names.current(db)
        }
        var previous = lowerBound
        var accumulators = transactions.map { transaction in
            defer { previous = transaction.seq }
            return ChangeAccumulator(expectedRows: Int(clamping: transaction.seq - previous - 1))
        }
        // The rows of each run of folded transactions, in one statement.
        var runStart: Int?
        for index in 0...transactions.count {
            if index < transactions.count && folded[index] {
                if runStart == nil { runStart = index }
                continue
            }
            guard let start = runStart else { continue }
            runStart = nil
            var current = start
            let after = start == 0 ? lowerBound : transactions[start - 1].seq
            try forEachChange(db, after: after, through: transactions[index - 1].seq, names: names) { id, entity, operation, key in
                while current < index - 1 && id > transactions[current].seq { current += 1 }
                accumulators[current].add(entity: entity, operation: operation, key: key)
            }
        }
        batch.saves = zip(transactions, accumulators).map { head, accumulator in
            Save(seq: head.seq, author: head.author, committedAt: head.committedAt, changes: accumulator.changes)
        }
        return batch
    }

    /// Calls `body` with each change (a reset with the table's name and a
    /// `.null` key) whose id is in `(after, through]`, in id order; or, with
    /// no `through`, among the first `limit` rows after `after`.
    /// - Returns: the rows read, changes or not (at most `limit`).
    @discardableResult
    private static func forEachChange(
        _ db: Database, after: Int64, through: Int64?, limit: Int64 = -1, names: TableNames,
        _ body: (Int64, String, HistorySchema.Operation, KeyValue) throws -> Void
    ) throws -> Int {
        // Keys are read as SQLite stores them: text as its bytes (so invalid
        // UTF-8 and NUL bytes survive), with its storage class.
        let changes =
            if let through {
                try RawRows(db, sql: "\(changeColumnsSQL) WHERE id > ? AND id <= ? ORDER BY id", after, through)
            } else {
                try RawRows(db, sql: "\(changeColumnsSQL) WHERE id > ? ORDER BY id LIMIT ?", after, limit)
            }
        var rows = 0
        while try changes.next() {
            rows += 1
            let id = changes.int64(0)
            // Pending (5), retired or placeholder (0) and marker (6) rows are not changes.
            guard let operation = HistorySchema.Operation(rawValue: Int(changes.int64(2))) else { continue }
            if operation == .reset {
                if changes.type(3) == SQLITE_TEXT || changes.type(3) == SQLITE_BLOB {
                    try body(id, String(decoding: changes.bytes(3), as: UTF8.self), .reset, .null)
                }
                continue
            }
            guard let table = names[changes.int64(1)] else { continue }
            let key: KeyValue
            if let rowid = changes.int64OrNil(4) {
                key = .rowid(rowid)
            } else {
                key = keyValue(changes, column: 3, composite: table.composite)
            }
            try body(id, table.name, operation, key)
        }
        return rows
    }

    private static let changeColumnsSQL = "SELECT id, entity, op, key, rid FROM \(HistorySchema.changeTable)"

    /// The changes whose ids are in `(after, through]`, folded as one save,
    /// and how many rows they were.
    static func folded(_ db: Database, after: Int64, through: Int64, names: TableNames) throws -> (changes: [EntityChange], rows: Int) {
        try fold(db, after: after, through: through, names: names, expectedRows: Int(clamping: through - after))
    }

    /// Every row after `after` (the newest marker), folded as one save, up
    /// to `limit` rows: `rows` says how many there are, up to `limit + 1`
    /// (then `changes` is empty: incomplete).
    static func foldedTail(
        _ db: Database, after: Int64, limit: Int, names: TableNames, expectedRows: Int
    ) throws -> (changes: [EntityChange], rows: Int) {
        let tail = try fold(db, after: after, through: nil, limit: Int64(limit) + 1, names: names, expectedRows: min(expectedRows, limit))
        return (tail.rows > limit ? [] : tail.changes, tail.rows)
    }

    /// The rows ``forEachChange(_:after:through:limit:names:_:)`` reads,
    /// folded as one save, and how many there were.
    private static func fold(
        _ db: Database, after: Int64, through: Int64?, limit: Int64 = -1, names: TableNames, expectedRows: Int
    ) throws -> (changes: [EntityChange], rows: Int) {
        var accumulator = ChangeAccumulator(expectedRows: expectedRows)
        let rows = try forEachChange(db, after: after, through: through, limit: limit, names: names) { _, entity, operation, key in
            accumulator.add(entity: entity, operation: operation, key: key)
        }
        return (accumulator.changes, rows)
    }

    /// The stored key in `column` of the current row.
    private static func keyValue(_ row: borrowing RawRows, column: Int32, composite: Bool) -> KeyValue {
        switch row.type(column) {
        case SQLITE_INTEGER: return .integer(row.int64(column))
        case SQLITE_FLOAT: return .real(row.double(column))
        case SQLITE_TEXT:
            let bytes = row.bytes(column)
            if composite, let key = CompositeKey.decode(bytes) { return key }
            return .text(bytes: bytes)
        case SQLITE_BLOB: return .blob(row.bytes(column))
        default: return .null
        }
    }
}
