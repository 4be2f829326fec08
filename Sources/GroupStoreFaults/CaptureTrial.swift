import Foundation
import GRDB
import GroupStore
import Subprocesses

/// The change-capture property: random SQL over random schemas, applied by
/// three writers — this process through the library, the `sqlite3` shell, and
/// `groupstore exec` — while `groupstore watch` follows the group. A copy of
/// the tables rebuilt from nothing but the delivered saves, plus reads of the
/// keys they name (a reset rereads the whole table), must equal the real
/// tables at every checkpoint (after one to a few transactions).
struct CaptureTrial {
    let suite: FaultSuite

    /// A table's rows by the key GroupStore names them with.
    typealias Rows = [KeyValue: [String: DatabaseValue]]

    func run(steps: Int, seed: UInt64 = 0x6361_7074_7572_65) throws -> [Outcome] {
        let group = suite.newGroup("capture")
        var configuration = GroupConfiguration(directory: group, member: try MemberName("library"))
        configuration.pruneInterval = nil
        // It only writes: the follower is the one that consumes.
        configuration.writesOnly = true
        let store = try GroupStore(configuration)
        defer { store.closeBlocking() }
        try store.writeBlocking { db in try db.execute(sql: "CREATE TABLE mark(n INTEGER PRIMARY KEY)") }
        let follower = try suite.watch(group, "follower")
        let shell = try suite.spawn("/usr/bin/sqlite3", ["-cmd", ".timeout 20000", group + "/store.sqlite"], name: "sqlite3")
        let reader = try DatabaseQueue(path: group + "/store.sqlite")

        var random = RandomSQL(seed: seed)
        var copy: [String: Rows] = [:]
        var consumed = 0
        var statements = 0
        var writers = ["library": 0, "sqlite3": 0, "exec": 0]
        var saves = 0
        var resets = 0
        var checks = 0
        for step in 1...steps {
            let tables = try reader.read { db in try RandomSQL.tables(db) }
            let count = Int.random(in: 1...4, using: &random.generator)
            var batch: [String] = []
            for _ in 0..<count { batch.append(random.statement(tables)) }
            statements += batch.count
            let writer = random.chance(10) ? "exec" : random.chance(50) ? "library" : "sqlite3"
            writers[writer, default: 0] += 1
            switch writer {
            case "library":
                try store.writeBlocking { db in
                    for sql in batch {
                        // A failing statement is undone alone, as in the shell.
                        try? db.inSavepoint {
                            try db.execute(sql: sql)
                            return .commit
                        }
                    }
                }
            case "exec":
                let exec = try suite.spawn(
                    "groupstore", ["exec", "--group", group, "--member", "cli", "--sql", batch.joined(separator: ";\n")], name: "exec")
                guard exec.waitForExit(timeout: 60) != nil else { throw FaultFailure("groupstore exec hung on \(batch)") }
            default:
                if random.chance(3) {
                    // VACUUM cannot run inside a transaction (and renumbers rowids).
                    shell.writeLine("VACUUM;")
                } else {
                    shell.writeLine("BEGIN;\n" + batch.map { $0 + ";" }.joined(separator: "\n") + "\nCOMMIT;")
                }
                shell.writeLine("SELECT 'done-\(step)';")
                guard shell.wait(timeout: 60, until: { output, _, _ in output.contains("done-\(step)") ? true : nil }) != nil else {
                    throw FaultFailure("sqlite3 did not finish step \(step): \(shell.errors.suffix(3))")
                }
            }
            // Transactions also follow each other unmarked (a marker between
            // every two would hide a fault where one transaction's leftovers
            // meet the next one's changes).
            if step < steps && random.chance(50) { continue }
            checks += 1
            // The marker: once the follower has it, it has everything before.
            try store.writeBlocking { db in try db.execute(sql: "INSERT INTO mark(n) VALUES (?)", arguments: [step]) }
            let lines = try waitForMark(step, follower: follower, from: consumed)
            for line in lines[consumed...] {
                let save = try PrintedChanges(line: line)
                saves += 1
                for change in save.changes where change.entity.lowercased() != "mark" {
                    let table = change.entity.lowercased()
                    if change.reset {
                        resets += 1
                        copy[table] = try reader.read { db in try Self.rows(of: change.entity, db) }
                    }
                    let current = try reader.read { db in try Self.rows(of: change.entity, db) }
                    for key in change.keys {
                        if let row = current?[key] { copy[table, default: [:]][key] = row } else { copy[table]?[key] = nil }
                    }
                    if current == nil { copy[table] = nil }
                }
            }
            consumed = lines.count
            let real = try reader.read { db in
                try Dictionary(
                    uniqueKeysWithValues: RandomSQL.tables(db).map { ($0.name.lowercased(), try Self.rows(of: $0.name, db) ?? [:]) })
            }
            let rebuilt = copy.filter { !$0.value.isEmpty || real[$0.key] != nil }
            let expected = real.filter { !$0.value.isEmpty || copy[$0.key] != nil }
            if rebuilt != expected {
                let differing = Set(rebuilt.keys).union(expected.keys).filter { rebuilt[$0] != expected[$0] }.sorted()
                return [
                    Outcome(
                        fault: "random SQL by three writers, rebuilt from saves", trials: step, passed: false,
                        figures: "copy differs after step \(step) (seed \(seed)) in \(differing): last statements \(batch); "
                            + differing.map {
                                "\($0): copy \(rebuilt[$0].map { Self.describe($0) } ?? "none") real \(expected[$0].map { Self.describe($0) } ?? "none")"
                            }.joined(separator: "; "))
                ]
            }
        }
        follower.stop()
        shell.stop()
        return [
            Outcome(
                fault: "random SQL by three writers, rebuilt from saves", trials: steps, passed: true,
                figures:
                    "\(statements) statements in \(steps) transactions (library \(writers["library"]!), sqlite3 \(writers["sqlite3"]!), exec \(writers["exec"]!)); \(saves) saves, \(resets) table resets; copy equal to the tables at all \(checks) checkpoints"
            )
        ]
    }

    private func waitForMark(_ step: Int, follower: Subprocess, from consumed: Int) throws -> [String] {
        let marker = "\"entity\":\"mark\",\"inserted\":[\(step)]"
        guard let lines = follower.wait(timeout: 60, until: { output, _, _ in output.last?.contains(marker) == true ? output : nil }) else {
            throw FaultFailure("the follower never delivered marker \(step): \(follower.errors.suffix(3))")
        }
        return lines
    }

    /// Every row of `table` by the key GroupStore names it with, or `nil` if
    /// the table does not exist.
    static func rows(of table: String, _ db: Database) throws -> Rows? {
        guard
            let info = try Row.fetchOne(
                db, sql: "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ? COLLATE NOCASE", arguments: [table])
        else {
            return nil
        }
        let withoutRowID: Bool = info[0]
        let columns = try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_info(?)", arguments: [table])
        let keys = columns.filter { ($0[1] as Int) > 0 }.sorted { ($0[1] as Int) < ($1[1] as Int) }.map { $0[0] as String }
        let names = columns.map { $0[0] as String }
        let quoted = "\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\""
        let select = withoutRowID ? "SELECT * FROM \(quoted)" : "SELECT _rowid_ AS \"groupstore rid\", * FROM \(quoted)"
        var rows: Rows = [:]
        for row in try Row.fetchAll(db, sql: select) {
            var values: [String: DatabaseValue] = [:]
            for name in names { values[name] = row[name] }
            let rid: Int64? = withoutRowID ? nil : row["groupstore rid"]
            let key: KeyValue
            if keys.isEmpty || keys == ["id"] {
                key = .integer(keys.isEmpty ? rid! : row["id"])
            } else if let rid, keys.contains(where: { values[$0]!.isNull }) {
                key = .rowid(rid)
            } else if keys.count == 1 {
                key = keyValue(values[keys[0]]!)
            } else {
                key = .composite(keys.map { keyValue(values[$0]!) })
            }
            rows[key] = values
        }
        return rows
    }

    static func keyValue(_ value: DatabaseValue) -> KeyValue {
        switch value.storage {
        case .int64(let integer): return .integer(integer)
        case .double(let double): return .real(double)
        case .string(let text): return .text(text)
        case .blob(let data): return .blob([UInt8](data))
        case .null: return .null
        }
    }

    static func describe(_ rows: Rows) -> String {
        rows.keys.map(\.json).sorted().joined(separator: ",")
    }
}

/// The changes of one `groupstore watch --format jsonl` line, keys decoded.
struct PrintedChanges {
    struct Change {
        var entity: String
        var keys: [KeyValue]
        var reset: Bool
    }

    var changes: [Change] = []

    init(line: String) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let changes = object["changes"] as? [[String: Any]]
        else { throw FaultFailure("not a save line: \(line)") }
        for change in changes {
            guard let entity = change["entity"] as? String else { throw FaultFailure("no entity: \(line)") }
            var keys: [KeyValue] = []
            for field in ["inserted", "updated", "deleted"] {
                for item in change[field] as? [Any] ?? [] {
                    guard let key = Self.key(item) else { throw FaultFailure("undecodable key \(item) in \(line)") }
                    keys.append(key)
                }
            }
            self.changes.append(Change(entity: entity, keys: keys, reset: change["reset"] as? Bool ?? false))
        }
    }

    /// A key from parsed JSON, through its JSON text (the library's own reader).
    static func key(_ item: Any) -> KeyValue? {
        guard let data = try? JSONSerialization.data(withJSONObject: item, options: [.fragmentsAllowed]) else { return nil }
        return KeyValue(json: String(decoding: data, as: UTF8.self))
    }
}
