import Foundation
import GRDB
import GRDBSQLite
import GroupStore
import Logging
import Subprocesses
import Synchronization

/// Row 3: time per commit through `GroupStore.write` against a plain GRDB
/// pool with the same settings, in one process, interleaved in blocks.
struct OverheadScenario {
    let bench: Bench

    func run() throws -> [TableRow] {
        let section = "3. write overhead (disk, in one process)"
        let directory = try bench.directory("overhead", on: .disk)
        let plain = try DatabasePool(path: directory + "/plain.sqlite")
        try plain.write { try $0.execute(sql: BenchSchema.createSQL) }
        var configuration = GroupConfiguration(
            directory: directory + "/group", member: try MemberName("writer"), logger: Logger(label: "bench"))
        configuration.migrator = BenchSchema.migrator
        configuration.pruneInterval = nil
        let store = try GroupStore(configuration)
        defer { store.closeBlocking() }

        var rows: [TableRow] = []
        for (size, count) in [(1, bench.quick ? 1000 : 10_000), (1000, bench.quick ? 50 : 300)] {
            var plainTimes: [Double] = []
            var trackedTimes: [Double] = []
            var n = 0
            while plainTimes.count < count {
                for _ in 0..<50 {
                    n += 1
                    let number = n
                    plainTimes.append(
                        try time { _ = try plain.write { try WriterRole.insert($0, n: number, rows: size, author: "plain") } })
                    trackedTimes.append(
                        try time { _ = try store.writeBlocking { try WriterRole.insert($0, n: number, rows: size, author: "writer") } })
                }
            }
            let plainDistribution = Distribution(plainTimes)
            let tracked = Distribution(trackedTimes)
            rows.append(
                TableRow(
                    section: section, what: "tracked commit, \(size)-row transaction", unit: "µs", distribution: tracked,
                    reference: String(format: "plain GRDB %.1f / p99 %.1f µs", plainDistribution.median, plainDistribution.p99),
                    ratio: tracked.median / plainDistribution.median, target: size == 1 ? "≤ 1.3×" : "≤ 1.5×"))
        }
        rows += try writeCost(plain: plain, store: store, section: section)
        rows += try floor(directory: directory, section: section)
        return rows
    }

    /// The floor of tracking: the same commits through SQLite's C API (no
    /// GRDB, no Swift layer), into a plain table and into the group's
    /// tracked table, whose triggers record each row, with the marker row
    /// that ends the transaction (what any writer outside the library runs,
    /// plus the marker). Interleaved in blocks, as above. Two more layouts,
    /// on copies of the schema: format 2's, whose transactions had a table
    /// of their own beside the changes (one page more per commit: the
    /// layout before this one, for comparison in the same run), and one
    /// change row by one trigger with nothing else (the least any history
    /// kept in the database, in the writer's transaction, costs).
    private func floor(directory: String, section: String) throws -> [TableRow] {
        let plain = try RawSQLite(path: directory + "/raw-plain.sqlite")
        try plain.execute(BenchSchema.createSQL)
        let tracked = try RawSQLite(path: directory + "/group/store.sqlite")
        var schema: [String] = []
        try tracked.run(
            "SELECT sql FROM sqlite_master WHERE name = 'items' OR name LIKE 'groupstore\\_change%' ESCAPE '\\' OR (type = 'trigger' AND tbl_name = 'items') ORDER BY type = 'trigger', rowid"
        ) { schema.append(String(cString: sqlite3_column_text($0, 0))) }
        let format2 = try RawSQLite(path: directory + "/raw-format2.sqlite")
        for sql in schema { try format2.execute(sql) }
        try format2.execute(
            "CREATE TABLE groupstore_transaction(seq INTEGER PRIMARY KEY, author TEXT, committed_at REAL NOT NULL, last_change INTEGER NOT NULL)"
        )
        let minimal = try RawSQLite(path: directory + "/raw-minimal.sqlite")
        try minimal.execute(BenchSchema.createSQL)
        try minimal.execute(
            "CREATE TABLE groupstore_change(id INTEGER PRIMARY KEY, entity INTEGER NOT NULL, op INTEGER NOT NULL, key, rid INTEGER)")
        try minimal.execute(
            "CREATE TRIGGER change_ai AFTER INSERT ON items BEGIN INSERT INTO groupstore_change(entity, op, key) VALUES (1, 1, NEW.id); END"
        )
        let insert = "INSERT INTO items(author, n, committed_at) VALUES ('raw', ?, ?)"
        let marker = "INSERT INTO groupstore_change(entity, op, key, rid) VALUES (0, 6, 'raw', CAST(? * 1e6 AS INTEGER))"
        let format2Seal =
            "INSERT INTO groupstore_transaction(author, committed_at, last_change) SELECT 'raw', ?, max(id) FROM groupstore_change"
        // The layouts timed against the plain commit; the last two for 1-row commits only.
        let layouts: [(database: RawSQLite, closing: String?, what: String, oneRowOnly: Bool)] = [
            (tracked, marker, "with the history's triggers and marker row", false),
            (
                format2, format2Seal,
                "with the history's triggers and format 2's table of transactions instead of the marker (one page more)", true
            ),
            (minimal, nil, "with one trigger writing one change row, nothing else (the least any history in the database costs)", true),
        ]
        var rows: [TableRow] = []
        var n = 20_000_000
        for (size, count) in [(1, bench.quick ? 1000 : 10_000), (1000, bench.quick ? 50 : 300)] {
            var plainTimes: [Double] = []
            var times = [[Double]](repeating: [], count: layouts.count)
            func commit(_ database: RawSQLite, closing: String?) throws -> Double {
                let start = monotonicSeconds()
                try database.run("BEGIN IMMEDIATE")
                let now = Date().timeIntervalSince1970
                for _ in 0..<size {
                    n += 1
                    try database.run(insert, [Double(n), now])
                }
                if let closing { try database.run(closing, [now]) }
                try database.run("COMMIT")
                return (monotonicSeconds() - start) * 1e6
            }
            while plainTimes.count < count {
                for _ in 0..<50 {
                    plainTimes.append(try commit(plain, closing: nil))
                    for (index, layout) in layouts.enumerated() where size == 1 || !layout.oneRowOnly {
                        times[index].append(try commit(layout.database, closing: layout.closing))
                    }
                }
            }
            let plainDistribution = Distribution(plainTimes)
            let reference = String(format: "the same with no triggers %.1f / p99 %.1f µs", plainDistribution.median, plainDistribution.p99)
            for (index, layout) in layouts.enumerated() where !times[index].isEmpty {
                let distribution = Distribution(times[index])
                rows.append(
                    TableRow(
                        section: section, what: "floor: \(size)-row commit through SQLite's C API, \(layout.what)", unit: "µs",
                        distribution: distribution, reference: reference, ratio: distribution.median / plainDistribution.median,
                        target: size == 1 ? "≤ 1.3×" : "≤ 1.5×"))
            }
        }
        return rows
    }

    /// What tracking adds to a 1-row commit, counted rather than timed:
    /// statements SQLite ran (trigger programs included) and pages written
    /// to the `-wal` file.
    private func writeCost(plain: DatabasePool, store: GroupStore, section: String) throws -> [TableRow] {
        var n = 10_000_000
        func cost(_ pool: DatabasePool, _ commit: () throws -> Void) throws -> (statements: Double, pages: Double) {
            let statements = Mutex(0)
            var ran = 0
            var pages: [Double] = []
            pool.writeWithoutTransaction { db in db.trace(options: .statement) { _ in statements.withLock { $0 += 1 } } }
            for _ in 0..<50 {
                _ = try pool.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                let before = statements.withLock { $0 }
                try commit()
                ran += statements.withLock { $0 } - before
                let log = try pool.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
                pages.append(Double(log?[1] as Int? ?? 0))
            }
            pool.writeWithoutTransaction { db in db.trace(options: .statement, nil) }
            return (Double(ran) / 50, Distribution(pages).median)
        }
        let plainCost = try cost(plain) {
            n += 1
            let number = n
            _ = try plain.write { try WriterRole.insert($0, n: number, rows: 1, author: "plain") }
        }
        let trackedCost = try cost(store.pool) {
            n += 1
            let number = n
            _ = try store.writeBlocking { try WriterRole.insert($0, n: number, rows: 1, author: "writer") }
        }
        return [
            TableRow(
                section: section, what: "tracked 1-row commit: SQL statements run (trigger programs included)", unit: "statements",
                value: trackedCost.statements, reference: String(format: "plain GRDB %.0f", plainCost.statements)),
            TableRow(
                section: section, what: "tracked 1-row commit: pages written to the -wal file", unit: "pages", value: trackedCost.pages,
                reference: String(format: "plain GRDB %.0f", plainCost.pages)),
        ]
    }

    private func time(_ body: () throws -> Void) throws -> Double {
        let start = monotonicSeconds()
        try body()
        return (monotonicSeconds() - start) * 1e6
    }
}
