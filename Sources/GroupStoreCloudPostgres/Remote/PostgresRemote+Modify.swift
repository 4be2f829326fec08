import Foundation
import GroupStoreCloud
import PostgresNIO

extension PostgresRemote {
    /// Applies `changes` in one transaction, one statement a record
    /// (pipelined), and says what happened to each, in order.
    ///
    /// - A save with no base tag inserts the record unless one exists (then
    ///   a conflict with it); a save with a base tag updates only the given
    ///   fields where the row's tag is still that tag; a delete likewise.
    ///   A statement that matched nothing is followed by a read of the row:
    ///   none (deleted: a conflict with `nil`), another user's (refused), or
    ///   a newer tag (a conflict with it).
    /// - Row-level security decides what a role may change: writing
    ///   another user's private zone, or a public row another user created,
    ///   is refused.
    /// - If a statement fails on the server (a value the server refuses),
    ///   the transaction is rolled back and each change is applied in its own
    ///   transaction, so the others still land and that one is refused with
    ///   the server's message.
    public func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
        guard changes.count <= Self.maxBatchRecords else {
            throw CloudSyncError(.batchTooLarge, "\(changes.count) changes are more than \(displayName) takes at once (\(Self.maxBatchRecords))")
        }
        let bytes = changes.reduce(0) { $0 + $1.estimatedSize }
        guard bytes <= Self.maxBatchBytes else {
            throw CloudSyncError(.batchTooLarge, "\(changes.count) changes (\(bytes) bytes) are more than \(displayName) takes at once (\(Self.maxBatchBytes) bytes)")
        }
        guard !changes.isEmpty else { return [] }
        return try await perform("save records") { connection in
            let epoch = try await epoch(connection)
            let user = try await user(connection)
            let tables = try await tables(Set(changes.map(\.id.type)), connection)
            let plan = ModifyPlan(changes: changes, tables: tables, user: user, epoch: epoch)
            do {
                return try await plan.run(connection, logger: logger)
            } catch let error where PostgresFailure.serverError(error) != nil && !PostgresFailure.isTransient(PostgresFailure.serverError(error)!.state) {
                logger.info(
                    "a batch failed on the server; saving its records one by one",
                    metadata: ["remote": "\(displayName)", "error": "\(PostgresFailure.serverError(error)!.message)"])
                var results: [CloudModifyResult] = []
                for change in changes {
                    let single = ModifyPlan(changes: [change], tables: tables, user: user, epoch: epoch)
                    do {
                        results += try await single.run(connection, logger: logger)
                    } catch let error where PostgresFailure.serverError(error) != nil {
                        let (state, message) = PostgresFailure.serverError(error)!
                        if PostgresFailure.isTransient(state) { throw error }
                        results.append(.refused(change.id, reason: "\(displayName) refused \(change.id): \(message)"))
                    }
                }
                return results
            }
        }
    }
}

extension CloudRecordChange {
    /// What the change adds to a batch, roughly (as the embedded remote counts it).
    var estimatedSize: Int {
        switch self {
        case .save(let id, _, let fields, _):
            return fields.reduce(id.name.utf8.count + 64) { total, field in
                switch field.value {
                case .text(let text): total + field.key.utf8.count + text.utf8.count + 4
                case .bytes(let bytes), .invalidText(let bytes): total + field.key.utf8.count + bytes.count * 2 + 4
                default: total + field.key.utf8.count + 16
                }
            }
        case .delete(let id, _, _): return id.name.utf8.count + 64
        }
    }
}

/// The statements of one `modify`, and how their answers become results.
private struct ModifyPlan {
    let changes: [CloudRecordChange]
    let tables: [String: PostgresTypedTable]
    let user: String
    let epoch: String

    /// What the first statement of a change does.
    enum Step {
        case refused(String)
        case insert(PostgresQuery, PostgresTypedTable)
        case update(PostgresQuery, PostgresTypedTable)
        case delete(PostgresQuery, PostgresTypedTable)
        /// A delete with no base tag: only a read (deleting needs the tag).
        case read(PostgresQuery, PostgresTypedTable)
    }

    func run(_ connection: PostgresConnection, logger: Logger) async throws -> [CloudModifyResult] {
        try await PostgresRemote.transaction(connection, logger: logger) { try await statements(connection, logger: logger) }
    }

    private func statements(_ connection: PostgresConnection, logger: Logger) async throws -> [CloudModifyResult] {
        let steps = changes.map(step)
        var pending: [EventLoopFuture<PostgresQueryResult>?] = []
        for step in steps {
            switch step {
            case .refused: pending.append(nil)
            case .insert(let query, _), .update(let query, _), .delete(let query, _), .read(let query, _):
                pending.append(connection.query(query, logger: logger))
            }
        }
        var results: [CloudModifyResult?] = Array(repeating: nil, count: changes.count)
        var lookups: [(index: Int, table: PostgresTypedTable)] = []
        for (index, step) in steps.enumerated() {
            let id = changes[index].id
            switch step {
            case .refused(let reason):
                results[index] = .refused(id, reason: reason)
            case .insert(_, let table), .update(_, let table):
                let rows = try await PostgresRemote.cells(pending[index]!)
                if let row = rows.first {
                    results[index] = .saved(try table.record(row, zone: id.zone, epoch: epoch))
                } else {
                    lookups.append((index, table))
                }
            case .delete(_, let table):
                let rows = try await PostgresRemote.bounded(pending[index]!).rows
                if rows.isEmpty { lookups.append((index, table)) } else { results[index] = .deleted(id) }
            case .read(_, let table):
                let rows = try await PostgresRemote.cells(pending[index]!)
                results[index] = try answer(id, row: rows.first, table: table, deletingUntagged: true)
            }
        }
        let reads = lookups.map { lookup in
            connection.query(Self.readQuery(lookups: lookup.table, id: changes[lookup.index].id), logger: logger)
        }
        for (lookup, read) in zip(lookups, reads) {
            let rows = try await PostgresRemote.cells(read)
            results[lookup.index] = try answer(changes[lookup.index].id, row: rows.first, table: lookup.table, deletingUntagged: false)
        }
        return results.map { $0! }
    }

    /// The result for a change whose statement matched nothing, from the
    /// row as it is now (`nil`: none this role can see).
    private func answer(_ id: CloudRecordID, row: [String?]?, table: PostgresTypedTable, deletingUntagged: Bool) throws -> CloudModifyResult {
        guard let row else { return deletingUntagged ? .deleted(id) : .conflict(id, server: nil) }
        let record = try table.record(row, zone: id.zone, epoch: epoch)
        if record.owner != user {
            return .refused(id, reason: "\(id) was created by another user; only its creator may change it")
        }
        return .conflict(id, server: record)
    }

    static func readQuery(lookups table: PostgresTypedTable, id: CloudRecordID) -> PostgresQuery {
        var binds = PostgresBindings()
        binds.append(id.zone.description)
        binds.append(id.name)
        return PostgresQuery(unsafeSQL: "SELECT \(table.selectList) FROM \(table.quoted) WHERE gs_zone = $1 AND gs_name = $2", binds: binds)
    }

    private func step(_ change: CloudRecordChange) -> Step {
        let id = change.id
        if id.zone.scope == .private, id.zone.owner != user {
            return .refused("\(id.zone) is another user's private zone; \(user) may not write to it")
        }
        guard let table = tables[id.type] else {
            return .refused("record type \(id.type) was never prepared on the remote")
        }
        guard table.scope == id.zone.scope else {
            return .refused("record type \(id.type) is synced as \(table.scope.rawValue); it cannot be written to \(id.zone)")
        }
        guard let keyParts = RecordName.keyParts(of: id.name, count: table.keyColumns.count) else {
            return .refused("record name \(id.name) cannot name a row of \(id.type) (\(table.keyColumns.count) key columns)")
        }
        switch change {
        case .save(_, let baseTag, let fields, let editedAt):
            var values = Values(table: table, zone: id.zone.description, name: id.name)
            let seconds = editedAt.timeIntervalSince1970.isFinite ? editedAt.timeIntervalSince1970 : Date().timeIntervalSince1970
            if let baseTag {
                for (column, value) in fields { values.set(column, value) }
                return .update(values.update(tag: PostgresTag.number(baseTag, epoch: epoch) ?? -1, editedAt: seconds), table)
            }
            for (column, part) in zip(table.keyColumns, keyParts) {
                switch part {
                case .text(let text): values.set(column, .text(text))
                case .blob(let bytes): values.set(column, .bytes(bytes))
                }
            }
            for (column, value) in fields { values.set(column, value) }
            return .insert(values.insert(editedAt: seconds), table)
        case .delete(_, let baseTag, _):
            guard let baseTag else { return .read(Self.readQuery(lookups: table, id: id), table) }
            var binds = PostgresBindings()
            binds.append(id.zone.description)
            binds.append(id.name)
            binds.append(String(PostgresTag.number(baseTag, epoch: epoch) ?? -1))
            return .delete(
                PostgresQuery(
                    unsafeSQL: "DELETE FROM \(table.quoted) WHERE gs_zone = $1 AND gs_name = $2 AND gs_tag = $3::bigint RETURNING gs_name",
                    binds: binds), table)
        }
    }
}

/// The column values of one save: each in its column, or kept aside in
/// `gs_extra` when it does not fit (or the server has no such column).
private struct Values {
    let table: PostgresTypedTable
    var binds = PostgresBindings()
    var columns: [(name: String, sql: String)] = []
    /// Values kept aside, and the columns whose kept-aside value goes.
    var extra: CloudFields = [:]
    var clearedExtra: [String] = []

    init(table: PostgresTypedTable, zone: String, name: String) {
        self.table = table
        binds.append(zone)
        binds.append(name)
    }

    mutating func set(_ column: String, _ value: CloudValue) {
        guard let type = table.type(of: column) else {
            extra[column] = value
            return
        }
        switch type.store(value) {
        case .column(let text):
            if let text {
                binds.append(text)
                columns.append((column, type.parameter(binds.count)))
            } else {
                columns.append((column, "NULL"))
            }
            clearedExtra.append(column)
        case .extra:
            columns.append((column, "NULL"))
            extra[column] = value
        }
    }

    private var extraJSON: String {
        var kept = extra
        for (column, value) in kept {
            if case .text(let text) = value, text.utf8.contains(0) { kept[column] = .invalidText(Array(text.utf8)) }
        }
        return CloudFieldsJSON.encode(kept)
    }

    mutating func insert(editedAt: Double) -> PostgresQuery {
        binds.append(extraJSON)
        let extraIndex = binds.count
        binds.append(String(editedAt))
        let names = ["gs_zone", "gs_name"] + columns.map { PostgresTypedTable.quote($0.name) } + ["gs_extra", "gs_edited_at"]
        let values = ["$1", "$2"] + columns.map(\.sql) + ["$\(extraIndex)::jsonb", "to_timestamp($\(binds.count)::float8)"]
        return PostgresQuery(
            unsafeSQL: """
                INSERT INTO \(table.quoted) (\(names.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))
                ON CONFLICT (gs_zone, gs_name) DO NOTHING RETURNING \(table.selectList)
                """,
            binds: binds)
    }

    mutating func update(tag: Int64, editedAt: Double) -> PostgresQuery {
        binds.append(clearedExtra)
        let clearedIndex = binds.count
        binds.append(extraJSON)
        let extraIndex = binds.count
        binds.append(String(editedAt))
        let editedIndex = binds.count
        binds.append(String(tag))
        let assignments = columns.map { "\(PostgresTypedTable.quote($0.name)) = \($0.sql)" } + [
            "gs_extra = (gs_extra - $\(clearedIndex)::text[]) || $\(extraIndex)::jsonb",
            "gs_edited_at = LEAST(GREATEST(to_timestamp($\(editedIndex)::float8), gs_edited_at + interval '1 millisecond'), clock_timestamp())",
        ]
        return PostgresQuery(
            unsafeSQL: """
                UPDATE \(table.quoted) SET \(assignments.joined(separator: ", "))
                WHERE gs_zone = $1 AND gs_name = $2 AND gs_tag = $\(binds.count)::bigint RETURNING \(table.selectList)
                """,
            binds: binds)
    }
}
