import Foundation
import GRDB
import GroupStore

/// Reads a synced table's rows as record fields and writes fields back.
struct RowCodec: Sendable {
    let table: MappedTable
    /// Blobs of at least this many bytes travel as assets.
    let assetThreshold: Int
    /// The statements' SQL, built once.
    private let selectByKey: String
    private let selectAll: String
    private let deleteByKey: String
    private let upsertAll: String

    init(table: MappedTable, assetThreshold: Int) {
        self.table = table
        self.assetThreshold = assetThreshold
        // Text is read as its bytes (and whether it was text): GRDB's strings would cut it
        // at a NUL byte and replace bytes that are not UTF-8.
        let fields = table.fieldColumns.map { column in
            "CASE typeof(\(quote(column))) WHEN 'text' THEN CAST(\(quote(column)) AS BLOB) ELSE \(quote(column)) END, typeof(\(quote(column))) = 'text'"
        }.joined(separator: ", ")
        // Keys as fields are (text read as its bytes, and whether it is text).
        let keys = table.keyColumns.map { column in
            "CASE typeof(\(quote(column))) WHEN 'text' THEN CAST(\(quote(column)) AS BLOB) ELSE \(quote(column)) END, typeof(\(quote(column))) = 'text'"
        }.joined(separator: ", ")
        let predicate = table.keyColumns.indices.map { "\(quote(table.keyColumns[$0])) = \(Self.keyMark($0))" }.joined(separator: " AND ")
        selectByKey = "SELECT \(table.fieldColumns.isEmpty ? "1" : fields) FROM \(quote(table.name)) WHERE \(predicate)"
        selectAll = "SELECT \(table.fieldColumns.isEmpty ? keys : keys + ", " + fields) FROM \(quote(table.name))"
        deleteByKey = "DELETE FROM \(quote(table.name)) WHERE \(predicate)"
        upsertAll = Self.upsertSQL(table, columns: table.fieldColumns)
    }

    /// The SQL of key part `index`: like a field, two arguments, whether it
    /// is text given as bytes, and the value (text bound as bytes and cast
    /// back keeps NUL bytes and bytes that are not UTF-8).
    private static func keyMark(_ index: Int) -> String {
        "CASE WHEN ?\(2 * index + 1) THEN CAST(?\(2 * index + 2) AS TEXT) ELSE ?\(2 * index + 2) END"
    }

    /// The arguments of a key's parts (see ``keyMark(_:)``).
    private static func keyArguments(_ key: [DatabaseValueConvertibleBox]) -> [DatabaseValue] {
        key.flatMap { part -> [DatabaseValue] in
            switch part {
            case .text(let text) where !text.utf8.contains(0): return [false.databaseValue, text.databaseValue]
            case .text(let text): return [true.databaseValue, Data(text.utf8).databaseValue]
            case .invalidText(let bytes): return [true.databaseValue, Data(bytes).databaseValue]
            case .blob(let bytes): return [false.databaseValue, Data(bytes).databaseValue]
            }
        }
    }

    /// Each field takes two arguments, as each key part does (``keyMark(_:)``).
    private static func upsertSQL(_ table: MappedTable, columns: [String]) -> String {
        let names = (table.keyColumns + columns).map(quote).joined(separator: ", ")
        let keyCount = table.keyColumns.count
        let marks =
            ((0..<keyCount).map(keyMark)
            + columns.indices.map { index in
                let flag = 2 * keyCount + 2 * index + 1
                return "CASE WHEN ?\(flag) THEN CAST(?\(flag + 1) AS TEXT) ELSE ?\(flag + 1) END"
            }).joined(separator: ", ")
        let conflict = table.keyColumns.map(quote).joined(separator: ", ")
        let update =
            columns.isEmpty
            ? "DO NOTHING" : "DO UPDATE SET " + columns.map { "\(quote($0)) = excluded.\(quote($0))" }.joined(separator: ", ")
        return "INSERT INTO \(quote(table.name)) (\(names)) VALUES (\(marks)) ON CONFLICT (\(conflict)) \(update)"
    }

    /// An update of `columns` of the row a key names, with the arguments of ``upsertSQL(_:columns:)``.
    private static func updateSQL(_ table: MappedTable, columns: [String]) -> String {
        let keyCount = table.keyColumns.count
        let sets = columns.indices.map { index -> String in
            let flag = 2 * keyCount + 2 * index + 1
            return "\(quote(columns[index])) = CASE WHEN ?\(flag) THEN CAST(?\(flag + 1) AS TEXT) ELSE ?\(flag + 1) END"
        }.joined(separator: ", ")
        let predicate = table.keyColumns.indices.map { "\(quote(table.keyColumns[$0])) = \(keyMark($0))" }.joined(separator: " AND ")
        return "UPDATE \(quote(table.name)) SET \(sets) WHERE \(predicate)"
    }

    /// A row's fields, and the bytes of its assets by hash.
    struct LocalRow: Sendable {
        var fields: CloudFields
        var assets: [String: [UInt8]]
    }

    /// Runs `body` on the local table: an SQLite error other than a
    /// constraint's (which callers handle) becomes a ``CloudSyncError`` that
    /// names the table as local (a column renamed under a running bridge is
    /// no failure of the remote).
    private func local<T>(_ doing: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError where error.resultCode.primaryResultCode != .SQLITE_CONSTRAINT {
            throw CloudSyncError(
                .store, "local table \(table.name): cannot \(doing): SQLite error \(error.resultCode.rawValue): \(error.message ?? "")",
                underlying: error)
        }
    }

    /// The row named `name`, or `nil` if there is none.
    func read(_ name: String, in db: Database) throws -> LocalRow? {
        guard let key = RecordName.keyValues(of: name, shape: table.key) else { return nil }
        let row = try local("read a row") {
            try Row.fetchOne(db.cachedStatement(sql: selectByKey), arguments: StatementArguments(Self.keyArguments(key)))
        }
        return row.map { decode($0, offset: 0) }
    }

    /// Every row, by record name (rows whose key names no record are left out).
    func readAll(in db: Database) throws -> [String: LocalRow] {
        try local("read its rows") {
            var rows: [String: LocalRow] = [:]
            let cursor = try Row.fetchCursor(db, sql: selectAll)
            while let row = try cursor.next() {
                guard let name = RecordName.name(of: keyValue(row), shape: table.key) else { continue }
                rows[name] = decode(row, offset: 2 * table.keyColumns.count)
            }
            return rows
        }
    }

    /// The key of a row read with ``selectAll`` (each part as two columns).
    private func keyValue(_ row: Row) -> KeyValue {
        func one(_ index: Int) -> KeyValue {
            let value: DatabaseValue = row[2 * index]
            let isText: Bool = row[2 * index + 1] ?? false
            switch value.storage {
            case .string(let text): return .text(text)
            case .blob(let data) where isText:
                let bytes = [UInt8](data)
                return String(validating: bytes, as: UTF8.self).map { .text($0) } ?? .invalidText(bytes)
            case .blob(let data): return .blob([UInt8](data))
            case .int64(let integer): return .integer(integer)
            case .double(let real): return .real(real)
            case .null: return .null
            }
        }
        if case .link(let columns) = table.key { return .composite((0..<columns.count).map(one)) }
        return one(0)
    }

    private func decode(_ row: Row, offset: Int) -> LocalRow {
        var result = LocalRow(fields: [:], assets: [:])
        for (index, column) in table.fieldColumns.enumerated() {
            let value: DatabaseValue = row[offset + 2 * index]
            let isText: Bool = row[offset + 2 * index + 1] ?? false
            switch value.storage {
            case .null: result.fields[column] = .null
            case .int64(let integer): result.fields[column] = .integer(integer)
            case .double(let real): result.fields[column] = .real(real)
            case .string(let text): result.fields[column] = .text(text)
            case .blob(let data) where isText:
                let bytes = [UInt8](data)
                result.fields[column] = String(validating: bytes, as: UTF8.self).map { .text($0) } ?? .invalidText(bytes)
            case .blob(let data):
                let bytes = [UInt8](data)
                if bytes.count >= assetThreshold || table.assetColumns.contains(column) {
                    let asset = CloudAsset(bytes: bytes)
                    result.fields[column] = .asset(asset)
                    result.assets[asset.hash] = bytes
                } else {
                    result.fields[column] = .bytes(bytes)
                }
            }
        }
        return result
    }

    /// Inserts or updates the row named `name` with `fields` (columns the
    /// table does not have are left out; columns not in `fields` are kept).
    /// - Parameters:
    ///   - assets: bytes of the assets `fields` names.
    ///   - existing: the row is there: an `UPDATE` of the given columns only
    ///     (an insert of some columns would meet the others' NOT NULL
    ///     constraints before its conflict clause).
    func upsert(_ name: String, fields: CloudFields, assets: [String: [UInt8]], existing: Bool = false, in db: Database) throws {
        guard let key = RecordName.keyValues(of: name, shape: table.key) else {
            throw CloudSyncError(.tableRefused, "record \(name) cannot name a row of table \(table.name)")
        }
        let columns = table.fieldColumns.filter { fields[$0] != nil }
        var arguments = Self.keyArguments(key)
        for column in columns {
            let value = fields[column]!
            switch value {
            case .text(let text):
                arguments += [true.databaseValue, Data(text.utf8).databaseValue]
            case .invalidText(let bytes):
                arguments += [true.databaseValue, Data(bytes).databaseValue]
            default:
                arguments += [false.databaseValue, try databaseValue(value, column: column, assets: assets)]
            }
        }
        let sql: String
        if existing {
            guard !columns.isEmpty else { return }
            sql = Self.updateSQL(table, columns: columns)
        } else {
            sql = columns.count == table.fieldColumns.count ? upsertAll : Self.upsertSQL(table, columns: columns)
        }
        try local("write a row") { try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(arguments)) }
    }

    /// Whether a row of any table (this one included) references the row
    /// named `name` through a foreign key declared on it.
    func isReferenced(_ name: String, in db: Database) throws -> Bool {
        guard let key = RecordName.keyValues(of: name, shape: table.key) else { return false }
        let predicate = table.keyColumns.indices.map { "p.\(quote(table.keyColumns[$0])) = \(Self.keyMark($0))" }
            .joined(separator: " AND ")
        let primaryKey = try String.fetchAll(
            db, sql: "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", arguments: [table.name])
        let tables = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        for child in tables {
            let references = try Row.fetchAll(
                db, sql: "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?) ORDER BY id, seq", arguments: [child])
            for (_, parts) in Dictionary(grouping: references, by: { $0[0] as Int64 }) {
                guard let first = parts.first, (first[1] as String).lowercased() == table.name.lowercased() else { continue }
                let from = parts.map { $0[2] as String }
                let to = parts.map { ($0[3] as String?) ?? "" }
                let targets = to.contains("") ? primaryKey : to
                guard targets.count == from.count else { continue }
                let join = zip(from, targets).map { "c.\(quote($0)) = p.\(quote($1))" }.joined(separator: " AND ")
                let sql = "SELECT EXISTS (SELECT 1 FROM \(quote(child)) c JOIN \(quote(table.name)) p ON \(join) WHERE \(predicate))"
                if try Bool.fetchOne(db, sql: sql, arguments: StatementArguments(Self.keyArguments(key))) == true { return true }
            }
        }
        return false
    }

    /// Deletes the row named `name`, if there is one.
    func delete(_ name: String, in db: Database) throws {
        guard let key = RecordName.keyValues(of: name, shape: table.key) else { return }
        try local("delete a row") {
            try db.cachedStatement(sql: deleteByKey).execute(arguments: StatementArguments(Self.keyArguments(key)))
        }
    }

    private func databaseValue(_ value: CloudValue, column: String, assets: [String: [UInt8]]) throws -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let integer): return integer.databaseValue
        case .real(let real): return real.databaseValue
        case .text(let text): return text.databaseValue
        case .bytes(let bytes), .invalidText(let bytes): return Data(bytes).databaseValue
        case .asset(let asset):
            guard let bytes = assets[asset.hash] else {
                throw CloudSyncError(.badRemote, "asset \(asset.hash) of \(table.name).\(column) was not downloaded")
            }
            return Data(bytes).databaseValue
        }
    }
}

/// An SQL identifier in double quotes.
func quote(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
