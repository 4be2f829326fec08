import GRDB

/// A table whose changes the history records, with what its triggers need.
struct TrackedTable: Hashable, Sendable {
    var name: String
    var columns: [String]
    /// Primary key columns in key order; empty means the table is keyed by rowid.
    var primaryKey: [String]
    /// Whether the key is the integer rowid (no primary key, or an `INTEGER PRIMARY KEY`).
    var keyIsRowID: Bool

    /// The user tables of the main schema (not views, virtual or shadow tables,
    /// nor the library's, SQLite's or GRDB's own).
    static func all(in db: Database) throws -> [TrackedTable] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type = 'table' ORDER BY name")
        var tables: [TrackedTable] = []
        for row in rows {
            let name: String = row["name"]
            if HistorySchema.isInternal(name) { continue }
            let withoutRowID: Bool = row["wr"]
            tables.append(try load(name, withoutRowID: withoutRowID, in: db))
        }
        return tables
    }

    private static func load(_ name: String, withoutRowID: Bool, in db: Database) throws -> TrackedTable {
        let columns = try Row.fetchAll(db, sql: "SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", arguments: [name])
        let names = columns.map { $0["name"] as String }
        let keyed = columns.filter { ($0["pk"] as Int) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }
        let primaryKey = keyed.map { $0["name"] as String }
        let isIntegerAlias = !withoutRowID && keyed.count == 1 && (keyed[0]["type"] as String).uppercased() == "INTEGER"
        return TrackedTable(
            name: name, columns: names, primaryKey: primaryKey.isEmpty ? [] : primaryKey,
            keyIsRowID: primaryKey.isEmpty || isIntegerAlias)
    }
}
