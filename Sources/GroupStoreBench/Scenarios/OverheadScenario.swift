import Foundation
import GRDB
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
        defer { store.close() }

        var rows: [TableRow] = []
        for (size, count) in [(1, bench.quick ? 1000 : 10_000), (1000, bench.quick ? 50 : 300)] {
            var plainTimes: [Double] = []
            var trackedTimes: [Double] = []
            var n = 0
            while plainTimes.count < count {
                for _ in 0..<50 {
                    n += 1
                    let number = n
                    plainTimes.append(try time { _ = try plain.write { try WriterRole.insert($0, n: number, rows: size, author: "plain") } })
                    trackedTimes.append(try time { _ = try store.write { try WriterRole.insert($0, n: number, rows: size, author: "writer") } })
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
            try pool.writeWithoutTransaction { db in db.trace(options: .statement) { _ in statements.withLock { $0 += 1 } } }
            for _ in 0..<50 {
                _ = try pool.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                let before = statements.withLock { $0 }
                try commit()
                ran += statements.withLock { $0 } - before
                let log = try pool.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
                pages.append(Double(log?[1] as Int? ?? 0))
            }
            try pool.writeWithoutTransaction { db in db.trace(options: .statement, nil) }
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
            _ = try store.write { try WriterRole.insert($0, n: number, rows: 1, author: "writer") }
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
