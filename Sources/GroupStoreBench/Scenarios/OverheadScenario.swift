import Foundation
import GRDB
import GroupStore
import Logging
import Subprocesses

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
                    plainTimes.append(try time { try plain.write { try WriterRole.insert($0, n: number, rows: size, author: "plain") } })
                    trackedTimes.append(try time { try store.write { try WriterRole.insert($0, n: number, rows: size, author: "writer") } })
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
        return rows
    }

    private func time(_ body: () throws -> Void) throws -> Double {
        let start = monotonicSeconds()
        try body()
        return (monotonicSeconds() - start) * 1e6
    }
}
