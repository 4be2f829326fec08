import Foundation
import GRDB

/// Which tables the history records.
public enum TrackedTables: Hashable, Sendable {
    /// Every user table (the default): all but SQLite's, GRDB's and the
    /// library's own, views, virtual and shadow tables.
    case all
    /// Only these tables (names compared case-insensitively).
    case only(Set<String>)

    func includes(_ table: String) -> Bool {
        switch self {
        case .all: return true
        case .only(let names): return names.contains { $0.caseInsensitiveCompare(table) == .orderedSame }
        }
    }
}

/// Keeps the history triggers of the tracked tables current.
struct TriggerInstaller: Sendable {
    let tracked: TrackedTables

    /// What `refresh` would change.
    struct Plan {
        var drop: [String] = []
        var create: [(name: String, sql: String)] = []
        /// Tracked tables that have no history trigger at all yet.
        var newTables: [TrackedTable] = []
        var isEmpty: Bool { drop.isEmpty && create.isEmpty }
    }

    /// Compares the triggers in the database with the expected ones (read only).
    func plan(_ db: Database) throws -> Plan {
        var existing: [String: String] = [:]
        let pattern = HistorySchema.reservedPrefix.replacingOccurrences(of: "_", with: "\\_") + "%"
        for row in try Row.fetchAll(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE ? ESCAPE '\\'",
            arguments: [pattern])
        {
            existing[row["name"]] = row["sql"]
        }
        var plan = Plan()
        var expectedNames = Set<String>()
        for table in try TrackedTable.all(in: db) where tracked.includes(table.name) {
            let statements = TriggerSQL(table: table).statements
            if !statements.contains(where: { existing[$0.name] != nil }) { plan.newTables.append(table) }
            for statement in statements {
                expectedNames.insert(statement.name)
                switch existing[statement.name] {
                case statement.sql: break
                case nil: plan.create.append(statement)
                default:
                    plan.drop.append(statement.name)
                    plan.create.append(statement)
                }
            }
        }
        plan.drop += existing.keys.filter { !expectedNames.contains($0) }.sorted()
        return plan
    }

    /// Installs missing triggers, replaces stale ones, drops orphans.
    ///
    /// - Parameter backfill: whether to record every row of a table that had
    ///   no trigger yet as inserted (for a table created in the same
    ///   transaction, so its first rows are not missed).
    /// - Returns: the names of the tables that started being tracked.
    @discardableResult
    func refresh(_ db: Database, backfill: (String) -> Bool) throws -> [String] {
        let plan = try plan(db)
        if plan.isEmpty { return [] }
        for name in plan.drop {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(quoteIdentifier(name))")
        }
        for statement in plan.create {
            try db.execute(sql: statement.sql)
        }
        for table in plan.newTables where backfill(table.name) {
            try db.execute(sql: TriggerSQL(table: table).backfillSQL)
        }
        return plan.newTables.map(\.name)
    }
}
