import GRDB

/// What the history triggers need to know of one table: how its rows are
/// keyed, how to reach the rowid, and which unique constraints can make a
/// `REPLACE` delete other rows.
///
/// Triggers name only key columns and unique-constraint columns, never the
/// others, so `ALTER TABLE … DROP COLUMN` (which refuses to drop a column a
/// trigger names) and `ADD COLUMN` keep working, and very wide tables get
/// small triggers.
struct TrackedTable: Hashable, Sendable {
    /// One column of a key or unique constraint, with the collation its
    /// uniqueness is judged by.
    struct Column: Hashable, Sendable {
        var name: String
        var collation: String
    }

    enum Key: Hashable, Sendable {
        /// An `INTEGER PRIMARY KEY` that aliases the rowid.
        case rowidAlias(String)
        /// No declared key: rows are keyed by rowid.
        case implicitRowid
        /// Declared key columns (not a rowid alias), in key order.
        case declared([Column])
    }

    var name: String
    var key: Key
    var withoutRowID: Bool
    /// How triggers reach the rowid: `rowid`, `_rowid_` or `oid`, whichever
    /// no column shadows; `nil` for a `WITHOUT ROWID` table (or when all three
    /// are column names).
    var rowidName: String?
    /// Unique constraints besides the primary key (expression indexes, which
    /// cannot be named column by column, are not included).
    var uniqueConstraints: [[Column]]
    /// The table's `CREATE TABLE` text: a change means its columns changed.
    var sql: String

    /// The number of key columns (1 for rowid keys).
    var keyColumnCount: Int {
        if case .declared(let columns) = key { return columns.count }
        return 1
    }

    /// Whether the history can key this table's rows at all (a rowid table
    /// with no declared key whose `rowid`, `_rowid_` and `oid` are all
    /// shadowed by columns cannot be).
    var isTrackable: Bool {
        if case .implicitRowid = key { return rowidName != nil }
        return true
    }

    /// The user tables of the main schema (not views, virtual or shadow
    /// tables, nor the library's, SQLite's or GRDB's own), by name.
    static func all(in db: Database) throws -> [TrackedTable] {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT l.name, l.wr, m.sql FROM pragma_table_list AS l JOIN sqlite_master AS m ON m.name = l.name AND m.type = 'table'
                WHERE l.schema = 'main' AND l.type = 'table' ORDER BY l.name
                """)
        var tables: [TrackedTable] = []
        for row in rows {
            let name: String = row[0]
            if HistorySchema.isInternal(name) { continue }
            tables.append(try load(name, withoutRowID: row[1], sql: row[2] ?? "", in: db))
        }
        return tables
    }

    private static func load(_ name: String, withoutRowID: Bool, sql: String, in db: Database) throws -> TrackedTable {
        let columns = try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", arguments: [name])
        let columnNames = Set(columns.map { ($0[0] as String).lowercased() })
        let keyNames = columns.filter { ($0[1] as Int) > 0 }.sorted { ($0[1] as Int) < ($1[1] as Int) }.map { $0[0] as String }

        var primaryIndex: String?
        var uniqueIndexes: [String] = []
        for index in try Row.fetchAll(db, sql: "SELECT name, \"unique\", origin FROM pragma_index_list(?)", arguments: [name]) {
            guard (index[1] as Int) == 1 else { continue }
            if (index[2] as String) == "pk" { primaryIndex = index[0] } else { uniqueIndexes.append(index[0]) }
        }

        let key: Key
        if keyNames.isEmpty {
            key = .implicitRowid
        } else if !withoutRowID && keyNames.count == 1 && primaryIndex == nil {
            // A single-column key with no index of its own is the rowid itself
            // (`INTEGER PRIMARY KEY`, but not `INTEGER PRIMARY KEY DESC`).
            key = .rowidAlias(keyNames[0])
        } else {
            let collations = try primaryIndex.map { try indexColumns($0, in: db) } ?? nil
            key = .declared(
                keyNames.map { name in
                    Column(name: name, collation: collations?.first { $0.name == name }?.collation ?? "BINARY")
                })
        }
        var unique: [[Column]] = []
        for index in uniqueIndexes {
            if let columns = try indexColumns(index, in: db) { unique.append(columns) }
        }
        let rowidName = withoutRowID ? nil : ["rowid", "_rowid_", "oid"].first { !columnNames.contains($0) }
        return TrackedTable(
            name: name, key: key, withoutRowID: withoutRowID, rowidName: rowidName, uniqueConstraints: unique, sql: sql)
    }

    /// The key columns of an index, or `nil` if one is an expression.
    private static func indexColumns(_ index: String, in db: Database) throws -> [Column]? {
        var columns: [Column] = []
        for row in try Row.fetchAll(
            db, sql: "SELECT cid, name, coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", arguments: [index])
        {
            guard (row[0] as Int) >= 0, let name = row[1] as String? else { return nil }
            columns.append(Column(name: name, collation: row[2] ?? "BINARY"))
        }
        return columns
    }
}
