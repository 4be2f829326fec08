import Foundation

/// Generates the history triggers of one table (registered as `id`).
///
/// Every changed row becomes one `groupstore_change` row `(entity, op, key,
/// rid)`, written inside the writer's own transaction, whoever the writer is:
///
/// | trigger | fires | records |
/// |---|---|---|
/// | `bi` | before insert, when the row collides or pending rows exist | rows a `REPLACE` may delete, as pending (op 5) |
/// | `ai` | after insert | the insert (1) |
/// | `ar` | after insert, when pending rows exist | pending rows that are gone as deleted (3), the others retired (0) |
/// | `ad` | after delete | the delete (3) |
/// | `bu` | before an update of key or unique columns | rows a `REPLACE` may delete, as pending |
/// | `au` | after an update keeping key and unique values | the update (2) |
/// | `ax` | after an update of unique columns (or of the rowid, under a declared key) only | pending rows that are gone; the update |
/// | `am` | after an update of the key | pending rows that are gone; delete of the old key, insert of the new |
///
/// SQLite skips delete triggers for rows a `REPLACE` removes (unless a
/// writer turned `recursive_triggers` on: then `ad` records them too, and
/// the second delete of a row folds into the first), so `bi`/`bu` note
/// every row the new values collide with (by key, unique values, and the
/// rowid when it is not the key), and the after trigger keeps those that
/// are gone. A statement that ignores the row (`OR IGNORE`,
/// `DO NOTHING`) fires no after trigger: its pending rows stay pending and
/// are never reported (the next `bi`/`bu` of the table retires them).
///
/// An insert that collides with nothing, into a table with nothing pending,
/// runs one statement (`ai`): the `WHEN` clauses of `bi` and `ar` skip
/// bodies that would change no row. (Run anyway, as in trigger format 1,
/// their three `UPDATE`s cost most of what tracking added to each inserted
/// row: 15 µs against 5 µs now, in a Python model of the `items` table.)
///
/// Only key and unique-constraint columns are named, so `ADD`, `RENAME` and
/// `DROP COLUMN` keep working, and the triggers of a 2,000-column table are
/// as small as any. `entity` is the table's id, not its name, so a renamed
/// table is reported under its new name.
struct TriggerSQL {
    let table: TrackedTable
    let id: Int64

    enum Kind: String, CaseIterable {
        case bi, ai, ar, ad, bu, au, ax, am
    }

    /// The triggers' generation, recorded in `groupstore_meta` as
    /// `trigger_format`: a member that joins a group whose triggers are of
    /// an older one replaces them (1: `bi` and `ai` ran every statement for
    /// every row; 2: `WHEN` clauses, and `ar` split from `ai`; 3: a pending
    /// row of a rowid-keyed table is found by its key alone, so the row
    /// whose rowid is −1 is no longer reported deleted by an insert that
    /// lets SQLite choose the rowid; 4: in a rowid table with a declared
    /// key, a row's rowid is checked for collisions and its change seen by
    /// `bu`, so a `REPLACE` or `UPDATE OR REPLACE` that frees a rowid reports
    /// the row it deletes; 5: `bu` fires exactly when `au` does not, so a
    /// composite key changed only in its recorded form, such as `'x'` to
    /// `'X'` under `NOCASE`, no longer turns leftover pending rows into
    /// deletes; 6: a single key column too is compared as recorded, so
    /// such a change is a delete of the old key and an insert of the new,
    /// not an update of the new key alone).
    static let format = 6

    static let pendingOperation = 5
    /// A pending row that turned out not to be a change (ignored by readers).
    static let retiredOperation = 0

    static func name(id: Int64, _ kind: Kind) -> String {
        "\(HistorySchema.reservedPrefix)\(id)_\(kind.rawValue)"
    }

    /// The table id a trigger name carries, if it is one of ours.
    static func id(fromTriggerName name: String) -> Int64? {
        guard name.hasPrefix(HistorySchema.reservedPrefix) else { return nil }
        let rest = name.dropFirst(HistorySchema.reservedPrefix.count)
        guard let underscore = rest.firstIndex(of: "_"), Kind(rawValue: String(rest[rest.index(after: underscore)...])) != nil
        else { return nil }
        return Int64(rest[..<underscore])
    }

    /// The `CREATE TRIGGER` statements, by trigger name.
    var statements: [(name: String, sql: String)] {
        Kind.allCases.compactMap { kind in create(kind).map { (TriggerSQL.name(id: id, kind), $0) } }
    }

    private var changes: String { HistorySchema.changeTable }
    private var quotedTable: String { quoteIdentifier(table.name) }

    private func create(_ kind: Kind) -> String? {
        let name = quoteIdentifier(TriggerSQL.name(id: id, kind))
        let record = "INSERT INTO \(changes)(entity, op, key, rid) VALUES"
        switch kind {
        case .bi:
            return """
                CREATE TRIGGER \(name) BEFORE INSERT ON \(quotedTable) \
                WHEN EXISTS (SELECT 1 FROM \(quotedTable) AS c WHERE \(conflict("NEW"))) OR \(anyPending) \
                BEGIN \(clearPending) \(notePending(colliding: conflict("NEW"))) END
                """
        case .ai:
            return "CREATE TRIGGER \(name) AFTER INSERT ON \(quotedTable) BEGIN \(record) (\(id), 1, \(key("NEW")), \(rid("NEW"))); END"
        case .ar:
            return "CREATE TRIGGER \(name) AFTER INSERT ON \(quotedTable) WHEN \(anyPending) BEGIN \(settlePending) END"
        case .ad:
            return "CREATE TRIGGER \(name) AFTER DELETE ON \(quotedTable) BEGIN \(record) (\(id), 3, \(key("OLD")), \(rid("OLD"))); END"
        case .bu:
            return """
                CREATE TRIGGER \(name) BEFORE UPDATE ON \(quotedTable) WHEN NOT (\(keyAndUniquesUnchanged)) \
                BEGIN \(clearPending) \(notePending(colliding: "(\(conflict("NEW"))) AND NOT (\(sameRow("OLD")))")) END
                """
        case .au:
            return
                "CREATE TRIGGER \(name) AFTER UPDATE ON \(quotedTable) WHEN \(keyAndUniquesUnchanged) BEGIN \(record) (\(id), 2, \(key("NEW")), \(rid("NEW"))); END"
        case .ax:
            guard !uniqueColumns.isEmpty || rowidApartFromKey != nil else { return nil }
            return """
                CREATE TRIGGER \(name) AFTER UPDATE ON \(quotedTable) WHEN \(sameKey) AND NOT (\(sameValues(uniqueColumns))) \
                BEGIN \(settlePending) \(record) (\(id), 2, \(key("NEW")), \(rid("NEW"))); END
                """
        case .am:
            return """
                CREATE TRIGGER \(name) AFTER UPDATE ON \(quotedTable) WHEN NOT (\(sameKey)) BEGIN \(settlePending) \
                \(record) (\(id), 3, \(key("OLD")), \(rid("OLD"))); \(record) (\(id), 1, \(key("NEW")), \(rid("NEW"))); END
                """
        }
    }

    /// Records every current row as inserted: for a table that starts being
    /// tracked after rows were written into it.
    var backfillSQL: String {
        "INSERT INTO \(changes)(entity, op, key, rid) SELECT \(id), 1, \(key("c")), \(rid("c")) FROM \(quotedTable) AS c"
    }

    // MARK: - REPLACE

    /// Whether the table has pending rows: a lookup in the partial index
    /// `groupstore_change_pending`, which is empty but while a statement runs
    /// (or after one that ignored its row).
    private var anyPending: String {
        "EXISTS (SELECT 1 FROM \(changes) WHERE op = \(Self.pendingOperation) AND entity = \(id))"
    }

    /// Pending rows are never deleted, only retired (op 0): deleting the
    /// newest change row would let SQLite give its id again to a later
    /// change, inside a transaction already closed.
    private var clearPending: String {
        "UPDATE \(changes) SET op = \(Self.retiredOperation) WHERE op = \(Self.pendingOperation) AND entity = \(id);"
    }

    private func notePending(colliding condition: String) -> String {
        "INSERT INTO \(changes)(entity, op, key, rid) SELECT \(id), \(Self.pendingOperation), \(key("c")), \(rid("c")) FROM \(quotedTable) AS c WHERE \(condition);"
    }

    /// Pending rows still in the table were not replaced: retire them; the
    /// rest were deleted by the statement's conflict resolution.
    private var settlePending: String {
        """
        UPDATE \(changes) SET op = \(Self.retiredOperation) WHERE op = \(Self.pendingOperation) AND entity = \(id) AND EXISTS (SELECT 1 FROM \(quotedTable) AS c \
        WHERE \(stillInTable)); \
        UPDATE \(changes) SET op = 3 WHERE op = \(Self.pendingOperation) AND entity = \(id);
        """
    }

    /// Whether the row `c` is the pending row of `groupstore_change`, still
    /// there beside the row `NEW`. A table keyed by its rowid looks the row
    /// up by key alone: a before-insert trigger sees a rowid that SQLite
    /// has yet to choose as −1, so the row whose rowid is −1 is noted as
    /// pending though `NEW`, given its rowid, collides with it no longer.
    /// A declared key is looked up through what `NEW` collides with, by the
    /// key's indexes (and, in a rowid table, the row whose rowid is −1, for
    /// the same reason).
    private var stillInTable: String {
        switch table.key {
        case .rowidAlias, .implicitRowid:
            return "\(key("c")) = \(changes).key AND NOT (\(sameRow("NEW")))"
        case .declared:
            let candidates = rowidApartFromKey.map { "(\(conflict("NEW"))) OR c.\($0) = -1" } ?? conflict("NEW")
            return "(\(candidates)) AND NOT (\(sameRow("NEW"))) AND \(key("c")) IS \(changes).key AND \(rid("c")) IS \(changes).rid"
        }
    }

    /// Whether an update keeps the key as recorded, the unique values and
    /// (under a declared key) the rowid: `au` records it as a plain update;
    /// otherwise `bu` runs the pending bookkeeping and `ax` or `am` settles
    /// it. The two are one condition and its negation, so every settling
    /// follows a `bu` that retired leftover pending rows (a key compared
    /// with `IS`, under its collation, could stay "equal" while its
    /// recorded form changed: `'x'` to `'X'` under `NOCASE`, `1` to `1.0`).
    private var keyAndUniquesUnchanged: String {
        uniqueColumns.isEmpty && rowidApartFromKey == nil ? sameKey : "\(sameKey) AND \(sameValues(uniqueColumns))"
    }

    /// The rowid's name in a rowid table whose key is declared (not the
    /// rowid's alias): its rows can collide, and move, by rowid as well as
    /// by key, when a writer names the rowid.
    private var rowidApartFromKey: String? {
        guard case .declared = table.key else { return nil }
        return table.rowidName
    }

    /// The rowid's name unless a key column aliases it (it is then compared
    /// as that column): the implicit rowid, or one apart from a declared key.
    private var rowidUnlessKeyAlias: String? {
        if case .rowidAlias = table.key { return nil }
        return table.rowidName
    }

    /// Rows `c` whose key or unique values collide with the row `alias`.
    private func conflict(_ alias: String) -> String {
        var terms: [String] = []
        switch table.key {
        case .rowidAlias(let column): terms.append("c.\(quoteIdentifier(column)) = \(alias).\(quoteIdentifier(column))")
        case .implicitRowid: terms.append("c.\(table.rowidName!) = \(alias).\(table.rowidName!)")
        case .declared(let columns): terms.append(equal(columns, alias))
        }
        if let rowid = rowidApartFromKey { terms.append("c.\(rowid) = \(alias).\(rowid)") }
        for constraint in table.uniqueConstraints { terms.append(equal(constraint, alias)) }
        return terms.map { "(\($0))" }.joined(separator: " OR ")
    }

    private func equal(_ columns: [TrackedTable.Column], _ alias: String) -> String {
        columns.map { column in
            let collate = column.collation.uppercased() == "BINARY" ? "" : " COLLATE \(quoteIdentifier(column.collation))"
            return "c.\(quoteIdentifier(column.name)) = \(alias).\(quoteIdentifier(column.name))\(collate)"
        }.joined(separator: " AND ")
    }

    /// Whether `c` is the row `alias` itself.
    private func sameRow(_ alias: String) -> String {
        if let rowid = table.rowidName { return "c.\(rowid) = \(alias).\(rowid)" }
        return keyColumns.map { "c.\(quoteIdentifier($0)) IS \(alias).\(quoteIdentifier($0))" }.joined(separator: " AND ")
    }

    // MARK: - Keys

    private var keyColumns: [String] {
        switch table.key {
        case .rowidAlias(let column): return [column]
        case .implicitRowid: return []
        case .declared(let columns): return columns.map(\.name)
        }
    }

    private var uniqueColumns: [String] {
        var seen = Set<String>()
        return table.uniqueConstraints.flatMap { $0.map(\.name) }.filter { seen.insert($0.lowercased()).inserted }
    }

    /// Whether `OLD` and `NEW` have the same key as recorded: the same
    /// type and the same bytes. A single declared key column is compared
    /// with `BINARY` and its type, not under its collation: `'x'` to `'X'`
    /// under `NOCASE`, or `1` to `1.0`, is a key change (a delete and an
    /// insert), as it is for a composite key, whose recorded text is exact.
    private var sameKey: String {
        if case .declared(let columns) = table.key, columns.count == 1 {
            let column = quoteIdentifier(columns[0].name)
            return
                "typeof(OLD.\(column)) = typeof(NEW.\(column)) AND OLD.\(column) IS NEW.\(column) COLLATE BINARY AND \(rid("OLD")) IS \(rid("NEW"))"
        }
        return "\(key("OLD")) IS \(key("NEW")) AND \(rid("OLD")) IS \(rid("NEW"))"
    }

    /// Whether `OLD` and `NEW` agree on `columns`, and on the rowid unless
    /// it is the key's alias (a rowid can collide, so a change of it is one
    /// of the key or unique values).
    private func sameValues(_ columns: [String]) -> String {
        var terms = columns.map { "OLD.\(quoteIdentifier($0)) IS NEW.\(quoteIdentifier($0))" }
        if let rowid = rowidUnlessKeyAlias { terms.append("OLD.\(rowid) IS NEW.\(rowid)") }
        return terms.isEmpty ? "1" : terms.joined(separator: " AND ")
    }

    /// The key of the row `alias` as stored in `groupstore_change.key`: the
    /// value itself for a single-column key (type kept), or for a composite
    /// key a text of tagged components (see ``CompositeKey``).
    func key(_ alias: String) -> String {
        switch table.key {
        case .rowidAlias(let column): return "\(alias).\(quoteIdentifier(column))"
        case .implicitRowid: return "\(alias).\(table.rowidName!)"
        case .declared(let columns) where columns.count == 1: return "\(alias).\(quoteIdentifier(columns[0].name))"
        case .declared(let columns): return CompositeKey.sql(columns.map { "\(alias).\(quoteIdentifier($0.name))" })
        }
    }

    /// The rowid of the row `alias` when its declared key holds a `NULL`
    /// (several such rows can exist in a rowid table), else `NULL`.
    func rid(_ alias: String) -> String {
        guard case .declared(let columns) = table.key, let rowid = table.rowidName else { return "NULL" }
        let anyNull = columns.map { "\(alias).\(quoteIdentifier($0.name)) IS NULL" }.joined(separator: " OR ")
        return "CASE WHEN \(anyNull) THEN \(alias).\(rowid) END"
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
