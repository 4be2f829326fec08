import GRDB
import GroupStore

/// Maps the tables chosen for sync from the local SQLite schema, refusing
/// those that cannot be synced safely, with a message naming the table and
/// the reason.
enum SchemaMapper {
    /// Column names with this prefix are the remote's system columns.
    static let reservedPrefix = "gs_"

    struct Request: Sendable {
        var privateTables: [String]
        var publicTables: [String]
        var sharedTables: [String] = []
        var assetColumns: [String: Set<String>]
    }

    /// The mapped tables, parents before the tables that reference them.
    static func map(_ request: Request, in db: Database, path: String) throws -> [MappedTable] {
        var scopes: [(String, CloudScope)] =
            request.privateTables.map { ($0, .private) } + request.publicTables.map { ($0, .public) }
            + request.sharedTables.map { ($0, .shared) }
        guard !scopes.isEmpty else {
            throw CloudSyncError(
                .invalidConfiguration, "no tables to sync in \(path): name at least one with --tables, --public-tables or --shared-tables")
        }
        var seen: [String: String] = [:]
        for (name, _) in scopes {
            if let first = seen[name.lowercased()] {
                throw CloudSyncError(.invalidConfiguration, "table \(name) is named twice (\(first) and \(name)) in the sync configuration")
            }
            seen[name.lowercased()] = name
        }
        // Real names, as SQLite has them.
        for index in scopes.indices {
            let wanted = scopes[index].0
            guard
                let found = try Row.fetchOne(
                    db, sql: "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE",
                    arguments: [wanted])
            else {
                throw CloudSyncError(.tableRefused, "table \(wanted) does not exist in \(path)")
            }
            let actual: String = found[0]
            guard (found[1] as String) == "table" else {
                throw CloudSyncError(
                    .tableRefused, "\(actual) is a view in \(path), not a table: only tables can be synced (a view has no rows of its own)")
            }
            if actual.lowercased().hasPrefix("groupstore_") || actual.lowercased().hasPrefix("sqlite_") {
                throw CloudSyncError(.tableRefused, "table \(actual) belongs to the library or SQLite and cannot be synced")
            }
            scopes[index].0 = actual
        }
        let scopeOf = Dictionary(uniqueKeysWithValues: scopes.map { ($0.0.lowercased(), $0.1) })
        var tables: [MappedTable] = []
        for (name, scope) in scopes {
            let assets = request.assetColumns.first { $0.key.lowercased() == name.lowercased() }?.value ?? []
            tables.append(try mapTable(name, scope: scope, assetColumns: assets, scopeOf: scopeOf, in: db))
        }
        return parentsFirst(tables)
    }

    private static func mapTable(
        _ name: String, scope: CloudScope, assetColumns: Set<String>, scopeOf: [String: CloudScope], in db: Database
    ) throws -> MappedTable {
        // hidden = 0: ordinary columns (not generated ones).
        let rows = try Row.fetchAll(
            db, sql: "SELECT name, type, \"notnull\", pk FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid", arguments: [name])
        let keyNames = rows.filter { ($0[3] as Int) > 0 }.sorted { ($0[3] as Int) < ($1[3] as Int) }.map { $0[0] as String }
        // Foreign keys: column → referenced table (single-column, to the parent's key).
        var references: [String: String] = [:]
        let foreignKeys = try Row.fetchAll(
            db, sql: "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?)", arguments: [name])
        let byID = Dictionary(grouping: foreignKeys) { $0[0] as Int }
        for (_, parts) in byID {
            let parent: String = parts[0][1]
            let from: String = parts[0][2]
            guard parts.count == 1 else {
                throw CloudSyncError(
                    .tableRefused, "table \(name) has a multi-column foreign key to \(parent): only single-column references can be synced")
            }
            guard let parentScope = scopeOf[parent.lowercased()] else {
                throw CloudSyncError(
                    .tableRefused,
                    "table \(name) references \(parent), which is not synced: its column \(from) would point at records other hosts never get; sync \(parent) too"
                )
            }
            // Everyone who reads a row must be able to read its parent.
            if scope != .private && parentScope != .public && parentScope != scope {
                throw CloudSyncError(
                    .tableRefused,
                    "\(scope.rawValue) table \(name) references \(parentScope.rawValue) table \(parent): other users could not resolve column \(from)"
                )
            }
            let parentKey = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?) WHERE pk > 0", arguments: [parent])
            if let to = parts[0][3] as String?, !(parentKey.count == 1 && parentKey[0].lowercased() == to.lowercased()) {
                throw CloudSyncError(
                    .tableRefused, "table \(name) column \(from) references \(parent).\(to), which is not its primary key")
            }
            references[from.lowercased()] = parent
        }

        let withoutRowID =
            try Bool.fetchOne(db, sql: "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?", arguments: [name]) ?? false
        try refuseCollatedKey(name, in: db)
        let key: MappedTable.KeyShape
        switch keyNames.count {
        case 0:
            throw CloudSyncError(
                .tableRefused,
                "table \(name) has no primary key: its rows are keyed by rowid, which would collide across hosts; give it a TEXT or UUID (BLOB) primary key"
            )
        case 1:
            let column = keyNames[0]
            let declared = (rows.first { ($0[0] as String) == column }?[1] as String?) ?? ""
            switch affinity(declared) {
            case _ where declared.uppercased().contains("UUID"): key = .blob(column)
            case .text: key = .text(column)
            case .blob where !declared.isEmpty: key = .blob(column)
            default:
                let rowidAlias = !withoutRowID && declared.uppercased() == "INTEGER"
                let what =
                    rowidAlias
                    ? "its rowid (INTEGER PRIMARY KEY \(column))" : "column \(column) (\(declared.isEmpty ? "no type" : declared))"
                throw CloudSyncError(
                    .tableRefused,
                    "table \(name) is keyed by \(what), which would collide across hosts; use a TEXT or UUID (BLOB) primary key")
            }
        default:
            let unreferenced = keyNames.filter { references[$0.lowercased()] == nil }
            guard unreferenced.isEmpty else {
                throw CloudSyncError(
                    .tableRefused,
                    "table \(name) has a composite key (\(keyNames.joined(separator: ", "))) whose \(unreferenced.joined(separator: ", ")) is not a reference to a synced table; only link tables may have composite keys"
                )
            }
            key = .link(keyNames)
        }

        var columns: [CloudColumn] = []
        for row in rows {
            let column: String = row[0]
            if column.lowercased().hasPrefix(reservedPrefix) {
                throw CloudSyncError(
                    .tableRefused,
                    "table \(name) has column \(column): names starting with \(reservedPrefix) are reserved for the remote's system columns"
                )
            }
            let declared: String = row[1]
            let isKey = keyNames.contains(column)
            var kind = kindOf(declared)
            if let _ = references[column.lowercased()] {
                kind = .reference
            } else if assetColumns.contains(where: { $0.lowercased() == column.lowercased() }) {
                kind = .asset
            }
            columns.append(
                CloudColumn(
                    name: column, kind: kind, declaredType: declared, notNull: (row[2] as Int) != 0, isKey: isKey,
                    references: references[column.lowercased()]))
        }
        for asset in assetColumns where !columns.contains(where: { $0.name.lowercased() == asset.lowercased() }) {
            throw CloudSyncError(.invalidConfiguration, "table \(name) has no column \(asset) to store as an asset")
        }
        columns.sort {
            ($0.isKey ? 0 : 1, keyNames.firstIndex(of: $0.name) ?? 0) < ($1.isKey ? 0 : 1, keyNames.firstIndex(of: $1.name) ?? 0)
        }
        let parents = Set(references.values.filter { $0.lowercased() != name.lowercased() })
        return MappedTable(
            name: name, scope: scope, key: key, columns: columns,
            assetColumns: Set(columns.filter { $0.kind == .asset }.map(\.name)), parents: parents)
    }

    /// Refuses a key compared under a collation other than `BINARY` (`NOCASE`,
    /// `RTRIM`, an application's): two hosts could create `Urgent` and
    /// `urgent` as two records where the table holds one row, and a value
    /// would be lost without a conflict.
    private static func refuseCollatedKey(_ name: String, in db: Database) throws {
        guard let index = try String.fetchOne(db, sql: "SELECT name FROM pragma_index_list(?) WHERE origin = 'pk'", arguments: [name])
        else { return }
        let columns = try Row.fetchAll(
            db, sql: "SELECT name, coll FROM pragma_index_xinfo(?) WHERE key = 1 AND cid >= 0 ORDER BY seqno", arguments: [index])
        for column in columns {
            let collation = (column[1] as String?) ?? "BINARY"
            guard collation.uppercased() == "BINARY" else {
                let key = (column[0] as String?) ?? "?"
                throw CloudSyncError(
                    .tableRefused,
                    "table \(name) compares its key \(key) with COLLATE \(collation): two hosts could create keys that differ only so (Urgent and urgent) as two records where this table holds one row, and one value would be lost; declare the key without a collation to sync the table"
                )
            }
        }
    }

    /// Parents before children (a cycle keeps the configured order; records
    /// whose parent has not arrived wait, parked as orphans).
    static func parentsFirst(_ tables: [MappedTable]) -> [MappedTable] {
        var ordered: [MappedTable] = []
        var placed = Set<String>()
        var remaining = tables
        while !remaining.isEmpty {
            let ready = remaining.firstIndex { table in table.parents.allSatisfy { placed.contains($0.lowercased()) } } ?? 0
            let table = remaining.remove(at: ready)
            ordered.append(table)
            placed.insert(table.name.lowercased())
        }
        return ordered
    }

    enum Affinity { case integer, text, blob, real, numeric }

    /// SQLite's column affinity rules (section 3.1 of "Datatypes In SQLite").
    static func affinity(_ declared: String) -> Affinity {
        let upper = declared.uppercased()
        if upper.contains("INT") { return .integer }
        if upper.contains("CHAR") || upper.contains("CLOB") || upper.contains("TEXT") { return .text }
        if upper.isEmpty || upper.contains("BLOB") { return .blob }
        if upper.contains("REAL") || upper.contains("FLOA") || upper.contains("DOUB") { return .real }
        return .numeric
    }

    static func kindOf(_ declared: String) -> CloudColumn.Kind {
        let upper = declared.uppercased()
        if upper.hasPrefix("BOOL") { return .boolean }
        if upper.contains("DATE") || upper.contains("TIME") { return .date }
        switch affinity(declared) {
        case .integer: return .integer
        case .text: return .text
        case .blob: return upper.isEmpty ? .any : .blob
        case .real, .numeric: return .real
        }
    }
}
