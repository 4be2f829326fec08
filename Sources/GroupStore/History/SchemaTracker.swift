import Foundation
import GRDB
import Logging

/// Keeps the history triggers, the table registry and the recorded schema in
/// step with the database's schema, whoever changed it.
///
/// Runs inside a write transaction whenever `PRAGMA schema_version` differs
/// from the one it last recorded: after a library write that changed the
/// schema (in that same transaction), or on a peer's merge after a writer
/// outside the library did. What it finds becomes history in that transaction:
/// - a table with no triggers yet starts being tracked, and its rows are
///   recorded as inserted (so rows an outside writer put in before the
///   triggers existed are not missed), unless the history is being created
///   and existing tables are adopted;
/// - a tracked table that lost its triggers was dropped (and perhaps created
///   again): a reset of its name;
/// - a renamed table: a reset of both names (its triggers moved with it and
///   report it under the new name from then on);
/// - a table whose `CREATE TABLE` text changed (columns added, renamed,
///   dropped): a reset;
/// - the schema version moved other than by the library write this refresh
///   runs in: a reset of every table keyed by an implicit rowid, because
///   a `VACUUM` (which renumbers those rows and leaves no other trace than
///   the version) cannot be ruled out (``refresh(_:adopt:changedHere:)``).
struct SchemaTracker: Sendable {
    let tracked: TrackedTables
    var logger = Logger(label: "GroupStore")

    /// What one refresh did.
    struct Report: Equatable {
        var started: [String] = []
        var reset: [String] = []
        var untrackable: [String] = []
        var isEmpty: Bool { started.isEmpty && reset.isEmpty }
    }

    private struct Entry {
        var id: Int64
        var name: String
        var sql: String
    }

    /// Whether the schema changed since it was last tracked (read only).
    static func needsRefresh(_ db: Database) throws -> Bool {
        try HistorySchema.schemaVersion(db) != (try HistorySchema.meta(db, "schema_version").storage.int64 ?? -1)
    }

    /// Whether a member must refresh (read only): the schema changed since it
    /// was last tracked, or the triggers are of an older format than this
    /// code's. Checked when a member joins, and by running members when the
    /// recorded format drops (a member running older code tracked a schema
    /// change and put its own triggers back): the newest code's triggers win
    /// again at its next merge. Triggers of a newer format are left alone.
    static func needsRefreshOrTriggerUpgrade(_ db: Database) throws -> Bool {
        try needsRefresh(db) || triggersAreOlder(recordedFormat: HistorySchema.meta(db, "trigger_format").storage.int64)
    }

    /// Whether triggers of the recorded `trigger_format` (none: before
    /// there were generations) are older than this code's.
    static func triggersAreOlder(recordedFormat: Int64?) -> Bool {
        (recordedFormat ?? 0) < Int64(TriggerSQL.format)
    }

    /// Brings triggers, registry and recorded schema up to date.
    ///
    /// The one rule for `VACUUM`: it renumbers the rows of tables keyed by an
    /// implicit rowid and leaves no trace but a move of the schema version,
    /// and nothing tells it apart from another writer's schema change (a
    /// heuristic once did, and missed a `VACUUM` hidden behind a later schema
    /// change). So whenever the version moved since it was last recorded and
    /// the move is not this transaction's own, those tables are reset. A move
    /// is this transaction's own only in a library write that found the
    /// schema tracked when it began (it holds the write lock throughout, and
    /// `VACUUM` cannot run inside a transaction). Library processes open the
    /// database without GRDB's schema-moving WAL set-up
    /// (``GroupDirectory/openPool(configuration:)``), so only schema changes
    /// made outside a library write, the app's migrations at open included,
    /// cost the extra resets.
    ///
    /// - Parameters:
    ///   - adopt: the history is new: start tracking existing tables
    ///     without recording their rows.
    ///   - changedHere: the schema moved in this transaction only, by a
    ///     library write that found it tracked when it began.
    @discardableResult
    func refresh(_ db: Database, adopt: Bool = false, changedHere: Bool = false) throws -> Report {
        var report = Report()
        // Judged before this refresh changes the schema itself.
        let recordedVersion = try HistorySchema.meta(db, "schema_version").storage.int64
        let rewritable = try !adopt && !changedHere && recordedVersion != Int64(HistorySchema.schemaVersion(db))
        let tables = try TrackedTable.all(in: db).filter { tracked.includes($0.name) }
        var tableByName: [String: TrackedTable] = [:]
        for table in tables { tableByName[EntityName.key(table.name)] = table }

        // Our triggers, by table id: the table each is attached to (SQLite
        // moves triggers with a renamed table) and its text.
        var triggers: [Int64: (table: String, sql: [String: String], oldest: Int64)] = [:]
        // Other triggers, by table: the newest one's place in the schema.
        var newestOther: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, tbl_name, sql, rowid FROM sqlite_master WHERE type = 'trigger'") {
            let name: String = row[0]
            let place: Int64 = row[3]
            guard let id = TriggerSQL.id(fromTriggerName: name) else {
                let table = EntityName.key(row[1])
                newestOther[table] = max(newestOther[table] ?? place, place)
                continue
            }
            triggers[id, default: (row[1], [:], place)].sql[name] = row[2]
            triggers[id]!.oldest = min(triggers[id]!.oldest, place)
        }
        let live = try Row.fetchAll(db, sql: "SELECT id, name, sql FROM \(HistorySchema.tableRegistry) WHERE live").map {
            Entry(id: $0[0], name: $0[1], sql: $0[2])
        }

        var claimed: [String: Int64] = [:]
        var registryChanged = false
        for entry in live {
            if let attached = triggers[entry.id]?.table, let table = tableByName[EntityName.key(attached)],
                claimed[EntityName.key(attached)] == nil
            {
                claimed[EntityName.key(attached)] = entry.id
                if attached != entry.name {
                    try recordReset(db, id: entry.id, name: entry.name, report: &report)
                    try recordReset(db, id: entry.id, name: attached, report: &report)
                } else if table.sql != entry.sql {
                    try recordReset(db, id: entry.id, name: attached, report: &report)
                }
                if attached != entry.name || table.sql != entry.sql {
                    try db.execute(
                        sql: "UPDATE \(HistorySchema.tableRegistry) SET name = ?, sql = ?, key_columns = ? WHERE id = ?",
                        arguments: [attached, table.sql, table.keyColumnCount, entry.id])
                    registryChanged = true
                }
                // SQLite runs a table's triggers newest first. A trigger of
                // the app's created after ours would run before ours, and
                // the changes it makes to the same row would be recorded
                // before the change that caused them (a row an update
                // deletes recorded as deleted, then updated): ours are made
                // again, newest.
                let overtaken =
                    triggers[entry.id].map { ours in
                        (newestOther[EntityName.key(attached)] ?? Int64.min) > ours.oldest
                    } ?? false
                try install(table, id: entry.id, existing: triggers[entry.id]?.sql ?? [:], recreate: overtaken, db)
            } else {
                // Its triggers went with the table (or it is no longer tracked).
                if tableByName[EntityName.key(entry.name)] != nil || triggers[entry.id] == nil {
                    try recordReset(db, id: entry.id, name: entry.name, report: &report)
                }
                try db.execute(sql: "UPDATE \(HistorySchema.tableRegistry) SET live = 0 WHERE id = ?", arguments: [entry.id])
                registryChanged = true
            }
        }
        // Triggers of tables no longer registered as live.
        let liveIDs = Set(claimed.values)
        for (id, found) in triggers where !liveIDs.contains(id) {
            for name in found.sql.keys { try db.execute(sql: "DROP TRIGGER IF EXISTS \(quoteIdentifier(name))") }
        }
        // Tables not tracked yet.
        for table in tables where claimed[EntityName.key(table.name)] == nil {
            guard table.isTrackable else {
                report.untrackable.append(table.name)
                continue
            }
            try db.execute(
                sql: "INSERT INTO \(HistorySchema.tableRegistry)(name, key_columns, sql) VALUES (?, ?, ?)",
                arguments: [table.name, table.keyColumnCount, table.sql])
            let id = db.lastInsertedRowID
            registryChanged = true
            do {
                try db.inSavepoint {
                    try install(table, id: id, existing: [:], db)
                    if !adopt {
                        // Created since the history exists: announce it, with
                        // every row already in it.
                        try recordReset(db, id: id, name: table.name, report: &report)
                        try db.execute(sql: TriggerSQL(table: table, id: id).backfillSQL)
                    }
                    return .commit
                }
                report.started.append(table.name)
            } catch {
                // Never fail the writer's transaction over a table we cannot track.
                try db.execute(sql: "UPDATE \(HistorySchema.tableRegistry) SET live = 0 WHERE id = ?", arguments: [id])
                report.untrackable.append(table.name)
                logger.info("cannot track table", metadata: ["table": "\(table.name)", "error": "\(error)"])
            }
        }
        if rewritable { try resetImplicitRowidTables(db, tables: tables, claimed: claimed, report: &report) }
        if registryChanged {
            try db.execute(sql: "UPDATE \(HistorySchema.metaTable) SET value = value + 1 WHERE key = 'registry_version'")
        }
        try HistorySchema.setMeta(db, "schema_version", try HistorySchema.schemaVersion(db))
        try HistorySchema.setMeta(db, "schema_text", try Self.schemaText(db))
        try HistorySchema.setMeta(db, "trigger_format", TriggerSQL.format)
        if !report.untrackable.isEmpty {
            logger.info(
                "tables not tracked: no way to key their rows (rowid, _rowid_ and oid are all column names)",
                metadata: ["tables": "\(report.untrackable.joined(separator: ","))"])
        }
        return report
    }

    /// Creates missing triggers and replaces stale ones of a tracked table;
    /// every one of them if `recreate` (so they are the newest, in order).
    private func install(_ table: TrackedTable, id: Int64, existing: [String: String], recreate: Bool = false, _ db: Database) throws {
        let statements = TriggerSQL(table: table, id: id).statements
        let expected = Set(statements.map(\.name))
        for name in existing.keys where !expected.contains(name) {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(quoteIdentifier(name))")
        }
        for statement in statements where recreate || existing[statement.name] != statement.sql {
            if existing[statement.name] != nil { try db.execute(sql: "DROP TRIGGER \(quoteIdentifier(statement.name))") }
            try db.execute(sql: statement.sql)
        }
    }

    private func recordReset(_ db: Database, id: Int64, name: String, report: inout Report) throws {
        try db.execute(
            sql: "INSERT INTO \(HistorySchema.changeTable)(entity, op, key) VALUES (?, \(HistorySchema.Operation.reset.rawValue), ?)",
            arguments: [id, name])
        report.reset.append(name)
    }

    private func resetImplicitRowidTables(
        _ db: Database, tables: [TrackedTable], claimed: [String: Int64], report: inout Report
    ) throws {
        for table in tables {
            guard case .implicitRowid = table.key, let id = claimed[EntityName.key(table.name)], !report.reset.contains(table.name)
            else { continue }
            try recordReset(db, id: id, name: table.name, report: &report)
        }
    }

    /// The schema's text, but for what the history itself creates: its
    /// tables, their named index and its triggers. Recorded (`schema_text`)
    /// for members running older code in the same group, which judge a
    /// `VACUUM` by it; this code does not read it.
    private static func schemaText(_ db: Database) throws -> String {
        let own = HistorySchema.ownObjects.map { "'\($0)'" }.joined(separator: ", ")
        return try String.fetchAll(
            db,
            sql: """
                SELECT type || ' ' || name || ' ' || tbl_name || ' ' || coalesce(sql, '') FROM sqlite_master
                WHERE name NOT IN (\(own)) AND NOT (type = 'trigger' AND name LIKE 'groupstore\\_%' ESCAPE '\\')
                ORDER BY type, name
                """
        ).joined(separator: "\n")
    }
}
