import Foundation

/// Generates the SQL of the history triggers of one table.
///
/// The text is deterministic, so comparing it with `sqlite_master.sql` tells
/// whether a table's triggers are current (a column added by a migration
/// changes the update trigger).
struct TriggerSQL {
    let table: TrackedTable

    enum Kind: String, CaseIterable {
        case insert, update, delete
    }

    static func name(of table: String, _ kind: Kind) -> String {
        "\(HistorySchema.reservedPrefix)\(table)_\(kind.rawValue)"
    }

    /// The three `CREATE TRIGGER` statements, by trigger name.
    var statements: [(name: String, sql: String)] {
        Kind.allCases.map { kind in (TriggerSQL.name(of: table.name, kind), create(kind)) }
    }

    private var quotedTable: String { quoteIdentifier(table.name) }
    private var entityLiteral: String { quoteLiteral(table.name) }

    private func create(_ kind: Kind) -> String {
        let name = quoteIdentifier(TriggerSQL.name(of: table.name, kind))
        let changes = HistorySchema.changeTable
        switch kind {
        case .insert:
            return """
                CREATE TRIGGER \(name) AFTER INSERT ON \(quotedTable) BEGIN \
                INSERT INTO \(changes)(entity, op, key) VALUES (\(entityLiteral), 1, \(key("NEW"))); END
                """
        case .delete:
            return """
                CREATE TRIGGER \(name) AFTER DELETE ON \(quotedTable) BEGIN \
                INSERT INTO \(changes)(entity, op, key) VALUES (\(entityLiteral), 3, \(key("OLD"))); END
                """
        case .update:
            let sameKey = "\(key("OLD")) IS \(key("NEW"))"
            return """
                CREATE TRIGGER \(name) AFTER UPDATE ON \(quotedTable) WHEN \(anyColumnChanged) BEGIN \
                INSERT INTO \(changes)(entity, op, key, columns) SELECT \(entityLiteral), 2, \(key("NEW")), \(changedColumns) WHERE \(sameKey); \
                INSERT INTO \(changes)(entity, op, key) SELECT \(entityLiteral), 3, \(key("OLD")) WHERE NOT (\(sameKey)); \
                INSERT INTO \(changes)(entity, op, key) SELECT \(entityLiteral), 1, \(key("NEW")) WHERE NOT (\(sameKey)); END
                """
        }
    }

    /// Records every current row as inserted: for a table that starts being
    /// tracked inside the transaction that created it.
    var backfillSQL: String {
        "INSERT INTO \(HistorySchema.changeTable)(entity, op, key) SELECT \(entityLiteral), 1, \(key(quotedTable)) FROM \(quotedTable)"
    }

    /// The key of the row `alias` as stored in `groupstore_change.key`: the
    /// integer rowid, or JSON text (a scalar, or an array for a composite key;
    /// blobs as hex strings).
    func key(_ alias: String) -> String {
        if table.keyIsRowID {
            return table.primaryKey.first.map { "\(alias).\(quoteIdentifier($0))" } ?? "\(alias).rowid"
        }
        let values = table.primaryKey.map { column -> String in
            let value = "\(alias).\(quoteIdentifier(column))"
            return "CASE typeof(\(value)) WHEN 'blob' THEN hex(\(value)) ELSE \(value) END"
        }
        if values.count == 1 { return "json_quote(\(values[0]))" }
        return "json_array(\(values.joined(separator: ", ")))"
    }

    private var anyColumnChanged: String {
        let columns = table.columns.isEmpty ? ["rowid"] : table.columns
        return columns.map { "OLD.\(quoteIdentifier($0)) IS NOT NEW.\(quoteIdentifier($0))" }.joined(separator: " OR ")
    }

    /// A JSON array of the names of the columns whose value changed.
    private var changedColumns: String {
        let keyColumns = Set(table.primaryKey)
        let columns = table.columns.filter { !keyColumns.contains($0) }
        if columns.isEmpty { return "'[]'" }
        let parts = columns.map { column in
            "CASE WHEN OLD.\(quoteIdentifier(column)) IS NOT NEW.\(quoteIdentifier(column)) THEN \(quoteLiteral("," + JSONText.string(column))) ELSE '' END"
        }
        return "'[' || substr(\(parts.joined(separator: " || ")), 2) || ']'"
    }
}

/// `"name"` with inner quotes doubled.
func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// `'text'` with inner quotes doubled.
func quoteLiteral(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}
