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
    /// Transactions up to here were pruned (read only when the transactions
    /// after the cursor do not start right after it).
    var prunedThrough: Int64 = 0
    /// The last change id of the last transaction read (or of the cursor's).
    var lastChange: Int64 = 0
    /// More transactions follow the ones read.
    var hasMore = false
}

/// Reads the history tables into ``Save`` values.
enum HistoryReader {
    /// Reads up to `limit` transactions after `cursor`, with their changes.
    ///
    /// - Parameter cursorLastChange: the last change id of the cursor's
    ///   transaction, when the caller knows it (saves a query).
    static func read(_ db: Database, after cursor: Int64, cursorLastChange: Int64? = nil, limit: Int) throws -> HistoryBatch {
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
        // Sequence numbers are consecutive unless pruning removed some.
        if transactions.first.map({ $0.seq != cursor + 1 }) ?? false {
            batch.prunedThrough = try HistorySchema.prunedThrough(db)
        }
        let lowerBound = sealedUpTo
        if let last = transactions.last { sealedUpTo = last.lastChange }
        batch.lastChange = sealedUpTo
        if !batch.hasMore {
            let newestChange = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM \(HistorySchema.changeTable)")) ?? 0
            batch.hasOpenChanges = newestChange > sealedUpTo
        }
        guard !transactions.isEmpty else { return batch }

        var accumulators = transactions.map { _ in ChangeAccumulator() }
        let changes = try Row.fetchCursor(
            db.cachedStatement(
                sql: "SELECT id, entity, op, key, columns FROM \(HistorySchema.changeTable) WHERE id > ? AND id <= ? ORDER BY id"),
            arguments: [lowerBound, sealedUpTo])
        var index = 0
        while let row = try changes.next() {
            let id: Int64 = row[0]
            while index < transactions.count - 1 && id > transactions[index].lastChange { index += 1 }
            guard let operation = HistorySchema.Operation(rawValue: row[2]) else { continue }
            accumulators[index].add(
                entity: row[1], operation: operation, key: keyValue(row[3] as DatabaseValue), columns: row[4] as String?)
        }
        batch.saves = zip(transactions, accumulators).map { head, accumulator in
            Save(seq: head.seq, author: head.author, committedAt: head.committedAt, changes: accumulator.changes)
        }
        return batch
    }

    /// One closed transaction, or `nil` if it is not (or no longer) in the history.
    static func transaction(_ db: Database, seq: Int64) throws -> Save? {
        let batch = try read(db, after: seq - 1, limit: 1)
        return batch.saves.first { $0.seq == seq }
    }

    static func keyValue(_ value: DatabaseValue) -> KeyValue {
        switch value.storage {
        case .int64(let integer): return .integer(integer)
        case .double(let double): return .real(double)
        case .string(let text): return KeyValue(json: text) ?? .text(text)
        case .blob(let data): return .text(data.map { String(format: "%02X", $0) }.joined())
        case .null: return .null
        }
    }
}

/// Folds a transaction's row changes into per-entity key sets, the way Core
/// Data reports a save: a row inserted then updated is inserted; inserted then
/// deleted is not reported; deleted then inserted again is updated.
struct ChangeAccumulator {
    private enum State { case inserted, updated, deleted, gone }

    private struct Entity {
        var name: String
        var order: [KeyValue] = []
        var states: [KeyValue: State] = [:]
        /// Changed columns per key, for keys updated in place.
        var columnsByKey: [KeyValue: [String]] = [:]
    }

    private var entities: [Entity] = []
    private var indexByName: [String: Int] = [:]

    mutating func add(entity name: String, operation: HistorySchema.Operation, key: KeyValue, columns: String?) {
        let index: Int
        if let existing = indexByName[name] {
            index = existing
        } else {
            index = entities.count
            indexByName[name] = index
            entities.append(Entity(name: name))
        }
        let previous = entities[index].states[key]
        if previous == nil { entities[index].order.append(key) }
        let next: State
        switch (previous, operation) {
        case (nil, .insert), (.gone, .insert), (.gone, .update), (.inserted, .insert), (.inserted, .update): next = .inserted
        case (nil, .update), (.updated, .update), (.updated, .insert), (.deleted, .insert), (.deleted, .update): next = .updated
        case (nil, .delete), (.updated, .delete), (.deleted, .delete): next = .deleted
        case (.inserted, .delete), (.gone, .delete): next = .gone
        }
        entities[index].states[key] = next
        if operation == .update, let columns, case .composite(let names)? = KeyValue(json: columns) {
            for case .text(let column) in names {
                entities[index].columnsByKey[key, default: []].append(column)
            }
        }
    }

    var changes: [EntityChange] {
        entities.compactMap { entity in
            var change = EntityChange(entity: entity.name)
            var seenColumns = Set<String>()
            for key in entity.order {
                switch entity.states[key] {
                case .inserted: change.inserted.append(key)
                case .updated:
                    change.updated.append(key)
                    // Only rows reported as updated contribute their columns.
                    for column in entity.columnsByKey[key] ?? [] where seenColumns.insert(column).inserted {
                        change.updatedColumns.append(column)
                    }
                case .deleted: change.deleted.append(key)
                case .gone, nil: break
                }
            }
            return change.isEmpty ? nil : change
        }
    }
}
