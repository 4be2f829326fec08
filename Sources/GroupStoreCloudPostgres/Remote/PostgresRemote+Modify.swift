#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO

    extension PostgresRemote {
        /// Applies `changes` in one transaction, one statement a record (or
        /// one for a table's new records), queued at once, and says what
        /// happened to each, in order.
        ///
        /// - A save with no base tag inserts the record unless one exists (then
        ///   a conflict with it), and one bringing a version back also unless
        ///   its tombstone holds a delete edited after it; a save with a base tag updates only the given
        ///   fields where the row's tag is still that tag; a delete likewise.
        ///   A record whose statement wrote nothing is read after the
        ///   transaction: no row (deleted: a conflict with `nil`), another
        ///   user's (refused), or a newer tag (a conflict with it).
        /// - Row-level security decides what a role may change: writing
        ///   another user's private zone, a public row another user created, or
        ///   a shared zone not shared with this role read-write, is refused.
        /// - If a statement fails on the server (a value the server refuses),
        ///   the transaction is rolled back and each change is applied in its own
        ///   transaction, so the others still land and that one is refused with
        ///   the server's message.
        public func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
            try await modify(changes, as: nil, origin: nil)
        }

        /// ``modify(_:)`` in the same transaction as the check of `mark`
        /// (`groupstore.require_history`, sent with the settings, before the
        /// changes: when the server's history lacks the mark, the transaction
        /// aborts and nothing is written) and a read of the log's head after
        /// the changes (sent before `COMMIT`).
        public func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<
            [CloudModifyResult]
        > {
            try await modify(changes, keeping: mark, as: nil, origin: nil)
        }

        /// `modify(_:keeping:)` as `role`, its notifications carrying `origin`
        /// (`nil`: the login role, this remote's).
        func modify(
            _ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?, as role: String?, origin: String?
        ) async throws -> CloudHistoryChecked<[CloudModifyResult]> {
            let guarded = HistoryGuard(mark: mark, display: displayName)
            do {
                let results = try await modify(changes, as: role, origin: origin, guarded: guarded)
                guard let head = guarded.answered else {
                    // Nothing to write was sent (no change): the history is read on its own.
                    return CloudHistoryChecked(value: results, history: try await history(keeping: mark, as: role))
                }
                noteEpoch(head.head.epoch)
                return CloudHistoryChecked(value: results, history: head)
            } catch let error as CloudSyncError where error.underlying.flatMap(PostgresFailure.serverError)?.state == "GS010" {
                let history = try await history(keeping: mark, as: role)
                guard !history.keepsMark else { throw error }
                return CloudHistoryChecked(value: nil, history: history)
            }
        }

        /// `modify` as `role` (`nil`: the login role), its notifications
        /// carrying `origin` (`nil`: this remote's).
        func modify(_ changes: [CloudRecordChange], as role: String?, origin: String?, guarded: HistoryGuard? = nil) async throws
            -> [CloudModifyResult]
        {
            guard changes.count <= Self.maxBatchRecords else {
                throw CloudSyncError(
                    .batchTooLarge,
                    "\(changes.count) changes are more than \(displayName) takes at once "
                        + "(at most \(Self.maxBatchRecords) changes in one modify)")
            }
            let bytes = changes.reduce(0) { $0 + $1.estimatedSize }
            guard bytes <= Self.maxBatchBytes else {
                throw CloudSyncError(
                    .batchTooLarge,
                    "\(changes.count) changes (\(bytes) bytes) are more than \(displayName) takes at once "
                        + "(at most \(Self.maxBatchBytes) bytes of fields, estimated, in one modify)")
            }
            guard !changes.isEmpty else { return [] }
            return try await perform("save records", as: role, origin: origin) { session in
                let epoch = try await epoch(session)
                let user = try await user(session)
                let tables = try await tables(Set(changes.map(\.id.type)), session)
                var access: [CloudZone: CloudShareAccess?] = [:]
                for zone in Set(changes.map(\.id.zone)) where zone.scope == .shared {
                    access[zone] = try await self.access(to: zone, session)
                }
                let plan = ModifyPlan(changes: changes, tables: tables, user: user, epoch: epoch, access: access, guarded: guarded)
                do {
                    return try await deleteTimes(plan.run(session), tables: tables, session)
                } catch let error
                    where PostgresFailure.serverError(error) != nil
                    && !PostgresFailure.isTransient(PostgresFailure.serverError(error)!.state)
                    && PostgresFailure.serverError(error)!.state != "GS010"
                {
                    logger.info(
                        "a batch failed on the server; saving its records one by one",
                        metadata: ["remote": "\(displayName)", "error": "\(PostgresFailure.serverError(error)!.message)"])
                    var results: [CloudModifyResult] = []
                    for change in changes {
                        let single = ModifyPlan(
                            changes: [change], tables: tables, user: user, epoch: epoch, access: access, guarded: guarded)
                        do {
                            results += try await single.run(session)
                        } catch let error where PostgresFailure.serverError(error) != nil {
                            let (state, message) = PostgresFailure.serverError(error)!
                            if PostgresFailure.isTransient(state) || state == "GS010" { throw error }
                            results.append(.refused(change.id, reason: "\(displayName) refused \(change.id): \(message)"))
                        }
                    }
                    return try await deleteTimes(results, tables: tables, session)
                }
            }
        }

        /// `results` with the delete's edit time of each conflict with a
        /// deleted record, as its tombstone keeps it (format 5; none kept:
        /// unknown). Read after the statements, in one query.
        private func deleteTimes(
            _ results: [CloudModifyResult], tables: [String: PostgresTypedTable], _ session: PostgresSession
        ) async throws -> [CloudModifyResult] {
            // A tombstone's key: zone, table, name.
            func key(_ id: CloudRecordID) -> [String]? {
                PostgresTypedTable.named(id.type, in: tables).map { [id.zone.description, $0.name, id.name] }
            }
            var keys: (zones: [String], types: [String], names: [String]) = ([], [], [])
            for case .conflict(let id, .none, _) in results {
                guard let key = key(id) else { continue }
                keys.zones.append(key[0])
                keys.types.append(key[1])
                keys.names.append(key[2])
            }
            guard !keys.zones.isEmpty else { return results }
            var binds = PostgresBindings()
            binds.append(keys.zones)
            binds.append(keys.types)
            binds.append(keys.names)
            let rows = try await session.cells(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT t.zone, t.type, t.name, extract(epoch FROM t.edited_at)::float8::text FROM groupstore.tombstones AS t
                        WHERE (t.zone, t.type, t.name) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[])) AND t.edited_at IS NOT NULL
                        """, binds: binds))
            var times: [String: Date] = [:]
            for row in rows where row.count == 4 {
                guard let zone = row[0], let type = row[1], let name = row[2], let seconds = row[3].flatMap(Double.init) else { continue }
                times[[zone, type, name].joined(separator: "\u{0}")] = Date(timeIntervalSince1970: seconds)
            }
            return results.map { result in
                guard case .conflict(let id, .none, _) = result, let key = key(id) else { return result }
                return .conflict(id, server: nil, deletedAt: times[key.joined(separator: "\u{0}")])
            }
        }
    }

    extension CloudRecordChange {
        /// What the change adds to a batch, roughly (as the embedded remote counts it).
        var estimatedSize: Int {
            switch self {
            case .save(let id, _, let fields, _, _):
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
    struct ModifyPlan {
        let changes: [CloudRecordChange]
        let tables: [String: PostgresTypedTable]
        let user: String
        let epoch: String
        /// This role's access to the shared zones written (`nil`: none).
        let access: [CloudZone: CloudShareAccess?]
        /// The mark checked first and the head read last, in each transaction.
        var guarded: HistoryGuard? = nil

        /// The one statement of a change: it writes where it may and answers
        /// `(true, the row written…)`, or nothing; the row of a change whose
        /// statement wrote nothing is read after the transaction (``rowsMet(_:steps:_:)``).
        enum Step {
            case refused(String)
            /// `readsMet`: the statement also answers `(false, the row as it
            /// was…)` from its own snapshot when it wrote nothing (see
            /// ``returning(_:_:readsMet:)``), and no answer means no row.
            case write(PostgresQuery, PostgresTypedTable, readsMet: Bool)
            /// A new record: sent with the other new records of its table and
            /// zone in one statement (``PostgresBulkInsert``), or alone.
            case insert(Values, editedAt: Double, PostgresTypedTable)
        }

        func run(_ session: PostgresSession) async throws -> [CloudModifyResult] {
            let statements = Statements(plan: self)
            // BEGIN, the settings with the mark's check, every statement, the head and COMMIT are
            // queued before the first answer is read. A statement that fails aborts the
            // transaction, and the COMMIT rolls back.
            let check = guarded?.check
            let rows = try await session.transaction(settings: [(PostgresServerSchema.originSetting, session.origin)], reading: check) {
                transaction in
                let sent = statements.send(transaction)
                let head = guarded.map { _ in transaction.send(HistoryGuard.headQuery) }
                transaction.sendCommit()
                if check != nil { _ = try await transaction.firstRead() }
                let rows = try await statements.rows(sent)
                if let head, let guarded { try guarded.read(try await PostgresRemote.cells(head), afterWrite: true) }
                return rows
            }
            let answered = try await rowsMet(rows, steps: statements.steps, session)
            return try zip(statements.steps, zip(changes, answered)).map { step, answered in
                let (change, row) = answered
                switch step {
                case .refused(let reason): return .refused(change.id, reason: reason)
                case .write(_, let table, _), .insert(_, _, let table): return try answer(change, row, table: table)
                }
            }
        }

        /// `rows` with, for each change whose statement wrote nothing,
        /// `(false, the row as it is now…)`, or `nil` when this role sees no
        /// row: read after the transaction by key, one statement a table. A
        /// conflict's row is read only when one happened, so a write's own
        /// statement stays one the server plans at once (a statement that
        /// also read the row it met took about 0.2 ms more to plan, measured).
        private func rowsMet(_ rows: [[String?]?], steps: [Step], _ session: PostgresSession) async throws -> [[String?]?] {
            var rows = rows
            var unmatched: [String: (table: PostgresTypedTable, indices: [Int])] = [:]
            for (index, step) in steps.enumerated() where rows[index] == nil {
                guard case .write(_, let table, readsMet: false) = step else { continue }
                unmatched[table.name, default: (table, [])].indices.append(index)
            }
            for (_, (table, indices)) in unmatched.sorted(by: { $0.key < $1.key }) {
                var binds = PostgresBindings()
                binds.append(indices.map { changes[$0].id.zone.description })
                binds.append(indices.map { changes[$0].id.name })
                let found = try await session.cells(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT gs_zone, 'false', \(table.selectList) FROM \(table.quoted)
                            WHERE (gs_zone, gs_name) IN (SELECT * FROM unnest($1::text[], $2::text[]))
                            """, binds: binds))
                var byKey: [String: [String?]] = [:]
                for row in found where row.count > 2 {
                    if let zone = row[0], let name = row[2] { byKey[zone + "\u{0}" + name] = Array(row.dropFirst()) }
                }
                for index in indices { rows[index] = byKey[changes[index].id.zone.description + "\u{0}" + changes[index].id.name] }
            }
            return rows
        }

        /// The statements of a plan: one a change, but new records of one table
        /// and zone, each named once, which go in one statement.
        private struct Statements {
            typealias Sent = (single: [EventLoopFuture<PostgresQueryResult>?], bulks: [EventLoopFuture<PostgresQueryResult>])
            let plan: ModifyPlan
            var steps: [Step]
            /// The indices of the new records sent together, a statement each.
            var bulks: [[Int]] = []

            init(plan: ModifyPlan) {
                self.plan = plan
                let changes = plan.changes
                // A record changed twice in one batch: what each change met is read in its own statement.
                var seen: Set<CloudRecordID> = []
                let repeated = Set(changes.map(\.id).filter { !seen.insert($0).inserted })
                steps = changes.map { plan.step($0, readsMet: repeated.contains($0.id)) }
                var groups: [String: [Int]] = [:]
                for (index, step) in steps.enumerated() {
                    if case .insert(_, _, let table) = step {
                        groups[table.name + "\u{0}" + changes[index].id.zone.description, default: []].append(index)
                    }
                }
                for (_, indices) in groups.sorted(by: { $0.key < $1.key }) {
                    if indices.count > 1, Set(indices.map { changes[$0].id.name }).count == indices.count {
                        bulks.append(indices)
                    } else {
                        for index in indices {
                            guard case .insert(var values, let editedAt, let table) = steps[index] else { continue }
                            let readsMet = repeated.contains(changes[index].id)
                            steps[index] = .write(values.insert(editedAt: editedAt, readsMet: readsMet), table, readsMet: readsMet)
                        }
                    }
                }
            }

            /// Sends every statement without waiting for an answer: each
            /// change's (`nil` for a refused one or one in a bulk), then the bulks'.
            func send(_ transaction: PostgresTransaction) -> Sent {
                let single = steps.map { step -> EventLoopFuture<PostgresQueryResult>? in
                    if case .write(let query, _, _) = step { return transaction.send(query) }
                    return nil
                }
                let bulked = bulks.map { indices -> EventLoopFuture<PostgresQueryResult> in
                    let rows = indices.compactMap { index -> PostgresBulkInsert.Row? in
                        guard case .insert(let values, let editedAt, _) = steps[index] else { return nil }
                        return values.bulkRow(editedAt: editedAt)
                    }
                    guard case .insert(_, _, let table) = steps[indices[0]] else {
                        preconditionFailure("a bulk of inserts holds inserts only")
                    }
                    return transaction.send(PostgresBulkInsert.query(table, zone: plan.changes[indices[0]].id.zone.description, rows: rows))
                }
                return (single, bulked)
            }

            /// The row each change's statement answered (`nil`: none), in order;
            /// for a new record in a bulk, the bulk's row of its name.
            func rows(_ sent: Sent) async throws -> [[String?]?] {
                var rows = [[String?]?](repeating: nil, count: steps.count)
                for (index, future) in sent.single.enumerated() {
                    guard let future else { continue }
                    rows[index] = try await PostgresRemote.cells(future).first
                }
                for (indices, future) in zip(bulks, sent.bulks) {
                    var byName: [String: [String?]] = [:]
                    for row in try await PostgresRemote.cells(future) where row.count > 1 {
                        if let name = row[1] { byName[name] = row }
                    }
                    for index in indices { rows[index] = byName[plan.changes[index].id.name] }
                }
                return rows
            }
        }

        /// A change's result from its statement's answer.
        private func answer(_ change: CloudRecordChange, _ answer: [String?]?, table: PostgresTypedTable) throws -> CloudModifyResult {
            let id = change.id
            guard let answer else {
                switch change {
                case .delete(_, let baseTag, _): return baseTag == nil ? .deleted(id) : .conflict(id, server: nil)
                case .save:
                    // Deleted on the server (a tagged save, or a version brought back that met a later delete),
                    // or a create that met a row committed after the statement's snapshot: a conflict with
                    // nothing; another round settles it.
                    return .conflict(id, server: nil)
                }
            }
            let written = answer[0] == "true"
            if written, case .delete = change { return .deleted(id) }
            let record = try table.record(Array(answer.dropFirst()), zone: id.zone, epoch: epoch)
            if written { return .saved(record) }
            if id.zone.scope == .public, record.owner != user {
                return .refused(id, reason: "\(id) was created by another user; only its creator may change it")
            }
            return .conflict(id, server: record)
        }

        /// `write` (a data-modifying statement) answering `(true, the row
        /// written…)`; `readsMet`: or when it wrote nothing, `(false, the row
        /// as it was…)`, read from the statement's snapshot (for a record
        /// changed twice in one batch: each change meets the row as the one
        /// before it left it).
        static func returning(_ write: String, _ table: PostgresTypedTable, readsMet: Bool) -> String {
            guard readsMet else { return "\(write) RETURNING 'true', \(table.selectList)" }
            return """
                WITH w AS (\(write) RETURNING \(table.selectList))
                SELECT 'true', * FROM w
                UNION ALL
                SELECT 'false', \(table.selectList) FROM \(table.quoted) WHERE gs_zone = $1 AND gs_name = $2 AND NOT EXISTS (SELECT 1 FROM w)
                """
        }

        func step(_ change: CloudRecordChange, readsMet: Bool) -> Step {
            let id = change.id
            if id.zone.scope == .private, id.zone.owner != user {
                return .refused("\(id.zone) is another user's private zone; \(user) may not write to it")
            }
            if id.zone.scope == .shared {
                switch access[id.zone] ?? nil {
                case .readWrite: break
                case .readOnly: return .refused("\(id.zone) is shared with \(user) read-only")
                case nil: return .refused("\(id.zone) is not shared with \(user)")
                }
            }
            guard let table = PostgresTypedTable.named(id.type, in: tables) else {
                return .refused("record type \(id.type) was never prepared on the remote")
            }
            guard table.scope == id.zone.scope else {
                return .refused("record type \(id.type) is synced as \(table.scope.rawValue); it cannot be written to \(id.zone)")
            }
            guard let keyParts = RecordName.keyParts(of: id.name, count: table.keyColumns.count) else {
                return .refused("record name \(id.name) cannot name a row of \(id.type) (\(table.keyColumns.count) key columns)")
            }
            switch change {
            case .save(_, let baseTag, let fields, let editedAt, let bringsBack):
                var values = Values(table: table, zone: id.zone.description, name: id.name)
                let seconds = editedAt.timeIntervalSince1970.isFinite ? editedAt.timeIntervalSince1970 : Date().timeIntervalSince1970
                if let baseTag {
                    for (column, value) in fields { values.set(column, value) }
                    return .write(
                        values.update(tag: PostgresTag.number(baseTag, epoch: epoch) ?? -1, editedAt: seconds, readsMet: readsMet), table,
                        readsMet: readsMet)
                }
                for (column, part) in zip(table.keyColumns, keyParts) {
                    switch part {
                    case .text(let text): values.set(column, .text(text))
                    case .blob(let bytes): values.set(column, .bytes(bytes))
                    // Kept aside in gs_extra (a text column cannot hold it); the name says which key it is.
                    case .invalidText(let bytes): values.set(column, .invalidText(bytes))
                    }
                }
                for (column, value) in fields { values.set(column, value) }
                // A version brought back is created only where no delete was edited after it: a statement of its own.
                if bringsBack {
                    return .write(values.insert(editedAt: seconds, unlessDeletedAfter: true, readsMet: readsMet), table, readsMet: readsMet)
                }
                return .insert(values, editedAt: seconds, table)
            case .delete(_, let baseTag, let editedAt):
                // Without a tag only a read: a live record is a conflict, none is deleted already.
                // The delete's edit time goes to its tombstone through a setting the row trigger reads (format 5).
                var binds = PostgresBindings()
                binds.append(id.zone.description)
                binds.append(id.name)
                binds.append(String(baseTag.flatMap { PostgresTag.number($0, epoch: epoch) } ?? -1))
                let seconds = editedAt.timeIntervalSince1970.isFinite ? editedAt.timeIntervalSince1970 : Date().timeIntervalSince1970
                binds.append(String(seconds))
                return .write(
                    PostgresQuery(
                        unsafeSQL: Self.returning(
                            """
                            DELETE FROM \(table.quoted) WHERE gs_zone = $1 AND gs_name = $2 AND gs_tag = $3::bigint
                            AND set_config('\(PostgresServerSchema.deleteEditedAtSetting)', $4, true) IS NOT NULL
                            """, table, readsMet: readsMet),
                        binds: binds), table, readsMet: readsMet)
            }
        }
    }

    /// The column values of one save: each in its column, or kept aside in
    /// `gs_extra` when it does not fit (or the server has no such column).
    struct Values {
        let table: PostgresTypedTable
        let name: String
        var binds = PostgresBindings()
        var columns: [(name: String, sql: String)] = []
        /// Each column given, as text (`nil`: NULL), for ``bulkRow(editedAt:)``.
        var texts: [String: String?] = [:]
        /// Values kept aside, and the columns whose kept-aside value goes.
        var extra: CloudFields = [:]
        var clearedExtra: [String] = []

        init(table: PostgresTypedTable, zone: String, name: String) {
            self.table = table
            self.name = name
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
                texts[column] = .some(text)
                clearedExtra.append(column)
            case .extra:
                columns.append((column, "NULL"))
                texts[column] = .some(nil)
                extra[column] = value
            }
        }

        private var extraJSON: String {
            var kept = extra
            for (column, value) in kept {
                if case .text(let text) = value, text.utf8.contains(0) { kept[column] = .invalidText(Array(text.utf8)) }
            }
            return CloudFieldsJSON.encode(kept, negativeZeroAsText: true)
        }

        /// This new record as a row of a ``PostgresBulkInsert``.
        func bulkRow(editedAt: Double) -> PostgresBulkInsert.Row {
            PostgresBulkInsert.Row(name: name, texts: texts, extra: extraJSON, editedAt: editedAt)
        }

        /// The insert of this new record. `unlessDeletedAfter`: not where the
        /// record's tombstone holds a delete edited after `editedAt` (by more
        /// than ``CloudRecordChange/sameVersion``; see
        /// ``CloudRecordChange/save(id:baseTag:fields:editedAt:bringsBack:)``),
        /// which the statement then answers with no row, as a deleted record.
        mutating func insert(editedAt: Double, unlessDeletedAfter: Bool = false, readsMet: Bool) -> PostgresQuery {
            binds.append(extraJSON)
            let extraIndex = binds.count
            binds.append(String(editedAt))
            let editedIndex = binds.count
            let names = ["gs_zone", "gs_name"] + columns.map { PostgresTypedTable.quote($0.name) } + ["gs_extra", "gs_edited_at"]
            let values = ["$1", "$2"] + columns.map(\.sql) + ["$\(extraIndex)::jsonb", "to_timestamp($\(editedIndex)::float8)"]
            var source = "VALUES (\(values.joined(separator: ", ")))"
            if unlessDeletedAfter {
                binds.append(table.name)
                source = """
                    SELECT \(values.joined(separator: ", ")) WHERE NOT EXISTS (
                    SELECT 1 FROM groupstore.tombstones AS t WHERE t.zone = $1 AND t.type = $\(binds.count) AND t.name = $2
                    AND t.edited_at > to_timestamp($\(editedIndex)::float8) + make_interval(secs => \(CloudRecordChange.sameVersion)))
                    """
            }
            return PostgresQuery(
                unsafeSQL: ModifyPlan.returning(
                    """
                    INSERT INTO \(table.quoted) (\(names.joined(separator: ", "))) \(source)
                    ON CONFLICT (gs_zone, gs_name) DO NOTHING
                    """, table, readsMet: readsMet),
                binds: binds)
        }

        mutating func update(tag: Int64, editedAt: Double, readsMet: Bool) -> PostgresQuery {
            binds.append(clearedExtra)
            let clearedIndex = binds.count
            binds.append(extraJSON)
            let extraIndex = binds.count
            binds.append(String(editedAt))
            let editedIndex = binds.count
            binds.append(String(tag))
            let assignments =
                columns.map { "\(PostgresTypedTable.quote($0.name)) = \($0.sql)" } + [
                    "gs_extra = (gs_extra - $\(clearedIndex)::text[]) || $\(extraIndex)::jsonb",
                    "gs_edited_at = LEAST(GREATEST(to_timestamp($\(editedIndex)::float8), gs_edited_at + interval '1 millisecond'), clock_timestamp())",
                ]
            return PostgresQuery(
                unsafeSQL: ModifyPlan.returning(
                    """
                    UPDATE \(table.quoted) SET \(assignments.joined(separator: ", "))
                    WHERE gs_zone = $1 AND gs_name = $2 AND gs_tag = $\(binds.count)::bigint
                    """, table, readsMet: readsMet),
                binds: binds)
        }
    }
#endif  // Postgres
