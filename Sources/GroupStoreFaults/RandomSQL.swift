import Foundation
import GRDB
import Subprocesses

/// Random SQL over random schemas, for the change-capture property trial:
/// inserts, updates with and without a key change, deletes, `REPLACE`,
/// `OR IGNORE`, upserts, `ADD`/`RENAME`/`DROP COLUMN`, `RENAME`/`DROP`/`CREATE
/// TABLE`. Keys come from small domains so statements collide; statements that
/// fail (a constraint, a missing table) are part of the mix.
struct RandomSQL {
    /// How a table is keyed, read back from the database (so failed schema
    /// statements never leave the generator out of step).
    enum Shape { case integerKey, textKey, composite, noKey }

    struct Table {
        var name: String
        var shape: Shape
        var hasUnique: Bool
        var dataColumns: [String]
    }

    var generator: SeededGenerator
    private var nameCounter = 0

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &generator)] }

    /// The tables the statements may touch (all user tables but `mark`).
    static func tables(_ db: Database) throws -> [Table] {
        var tables: [Table] = []
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT l.name, l.wr FROM pragma_table_list AS l WHERE l.schema = 'main' AND l.type = 'table'
                AND l.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND l.name NOT LIKE 'groupstore\\_%' ESCAPE '\\' AND l.name <> 'mark'
                ORDER BY l.name
                """)
        {
            let name: String = row[0]
            let columns = try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_info(?)", arguments: [name])
            let keys = columns.filter { ($0[1] as Int) > 0 }.map { $0[0] as String }
            let shape: Shape =
                keys.isEmpty ? .noKey : keys.count > 1 ? .composite : keys == ["id"] ? .integerKey : .textKey
            let names = columns.map { $0[0] as String }
            tables.append(
                Table(
                    name: name, shape: shape, hasUnique: names.contains("u"),
                    dataColumns: names.filter { !keys.contains($0) && $0 != "u" }))
        }
        return tables
    }

    // MARK: - Values

    mutating func integerKey() -> String { "\(Int.random(in: 1...12, using: &generator))" }
    mutating func textKey() -> String { chance(5) ? "NULL" : "'k\(Int.random(in: 1...12, using: &generator))'" }
    mutating func uniqueValue() -> String { chance(10) ? "NULL" : "'u\(Int.random(in: 1...8, using: &generator))'" }
    mutating func value() -> String {
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: return "NULL"
        case 1: return "x'\(String(format: "%02x", Int.random(in: 0...255, using: &generator)))'"
        case 2: return "\(Int.random(in: -5...1000, using: &generator))"
        case 3: return "\(Double(Int.random(in: 0...100, using: &generator)) / 4)"
        default: return "'v\(Int.random(in: 0...99, using: &generator))'"
        }
    }

    mutating func keyColumnsAndValues(_ table: Table) -> (columns: [String], values: [String]) {
        switch table.shape {
        case .integerKey: return (["id"], [integerKey()])
        case .textKey: return (["k"], [textKey()])
        case .composite: return (["a", "b"], [textKey(), integerKey()])
        case .noKey: return ([], [])
        }
    }

    mutating func keyCondition(_ table: Table) -> String {
        let (columns, values) = keyColumnsAndValues(table)
        if columns.isEmpty { return "rowid = \(Int.random(in: 1...12, using: &generator))" }
        return zip(columns, values).map { $0.1 == "NULL" ? "\($0.0) IS NULL" : "\($0.0) = \($0.1)" }.joined(separator: " AND ")
    }

    // MARK: - Statements

    mutating func createTable() -> String {
        nameCounter += 1
        let name = chance(30) ? "t\(Int.random(in: 1...4, using: &generator))" : "t\(nameCounter + 4)"
        let unique = chance(50) ? ", u TEXT UNIQUE" : ""
        switch Int.random(in: 0..<5, using: &generator) {
        case 0: return "CREATE TABLE IF NOT EXISTS \(name)(id INTEGER PRIMARY KEY\(unique), v0, v1)"
        case 1: return "CREATE TABLE IF NOT EXISTS \(name)(k TEXT PRIMARY KEY\(unique), v0)"
        case 2: return "CREATE TABLE IF NOT EXISTS \(name)(a TEXT, b INT\(unique), v0, PRIMARY KEY (a, b))"
        case 3: return "CREATE TABLE IF NOT EXISTS \(name)(a TEXT NOT NULL, b INT NOT NULL\(unique), v0, PRIMARY KEY (a, b)) WITHOUT ROWID"
        default: return "CREATE TABLE IF NOT EXISTS \(name)(\(unique.isEmpty ? "" : "u TEXT UNIQUE, ")v0, v1)"
        }
    }

    /// One statement over `tables` (a new table when there is none).
    mutating func statement(_ tables: [Table]) -> String {
        guard !tables.isEmpty, !chance(3) else { return createTable() }
        let table = pick(tables)
        let name = table.name
        let roll = Int.random(in: 0..<100, using: &generator)
        switch roll {
        case 0..<30:
            let (keys, keyValues) = keyColumnsAndValues(table)
            let data = table.dataColumns.prefix(2)
            let columns = keys + (table.hasUnique ? ["u"] : []) + data
            let values = keyValues + (table.hasUnique ? [uniqueValue()] : []) + data.map { _ in value() }
            let verb = pick(["INSERT", "INSERT OR REPLACE", "REPLACE", "INSERT OR IGNORE", "INSERT"])
            var sql = "\(verb) INTO \(name)(\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
            if verb == "INSERT", let column = data.first, !keys.isEmpty, chance(40) {
                sql += " ON CONFLICT DO UPDATE SET \(column) = excluded.\(column)"
            }
            return sql
        case 30..<55:
            guard let column = table.dataColumns.first.map({ _ in pick(table.dataColumns) }) else {
                return "DELETE FROM \(name) WHERE \(keyCondition(table))"
            }
            let scope = chance(20) ? "rowid % 3 = 0" : keyCondition(table)
            return "UPDATE \(name) SET \(column) = \(value()) WHERE \(scope)"
        case 55..<65:
            let or = chance(50) ? " OR REPLACE" : ""
            switch table.shape {
            case .integerKey: return "UPDATE\(or) \(name) SET id = \(integerKey()) WHERE id = \(integerKey())"
            case .textKey: return "UPDATE\(or) \(name) SET k = \(textKey()) WHERE \(keyCondition(table))"
            case .composite: return "UPDATE\(or) \(name) SET b = \(integerKey()) WHERE \(keyCondition(table))"
            case .noKey:
                return
                    "UPDATE\(or) \(name) SET rowid = rowid + \(Int.random(in: 1...20, using: &generator)) WHERE rowid = (SELECT max(rowid) FROM \(name))"
            }
        case 65..<72:
            guard table.hasUnique else { return "DELETE FROM \(name) WHERE \(keyCondition(table))" }
            return "UPDATE OR REPLACE \(name) SET u = \(uniqueValue()) WHERE \(keyCondition(table))"
        case 72..<86:
            return "DELETE FROM \(name) WHERE \(chance(15) ? "rowid % 4 = 1" : keyCondition(table))"
        case 86..<89:
            nameCounter += 1
            return "ALTER TABLE \(name) ADD COLUMN c\(nameCounter) DEFAULT \(chance(50) ? "'d'" : "NULL")"
        case 89..<92:
            guard !table.dataColumns.isEmpty else { return createTable() }
            nameCounter += 1
            return "ALTER TABLE \(name) RENAME COLUMN \(pick(table.dataColumns)) TO r\(nameCounter)"
        case 92..<94:
            guard table.dataColumns.count > 1 else { return createTable() }
            return "ALTER TABLE \(name) DROP COLUMN \(pick(table.dataColumns))"
        case 94..<96:
            nameCounter += 1
            return "ALTER TABLE \(name) RENAME TO n\(nameCounter)"
        case 96..<98:
            return "DROP TABLE \(name)"
        default:
            return createTable()
        }
    }
}
