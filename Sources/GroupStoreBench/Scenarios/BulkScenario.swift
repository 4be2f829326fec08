import Foundation
import GRDB
import GroupStore
import Logging
import Subprocesses

/// Row 7: one transaction of 1,000,000 rows: commit time against plain GRDB,
/// its payload on disk, and how long until a peer process has the save.
struct BulkScenario {
    let bench: Bench

    func run() throws -> [TableRow] {
        let rows = bench.quick ? 100_000 : 1_000_000
        let section = "7. bulk: one transaction of \(rows) rows (disk)"
        let directory = try bench.directory("bulk", on: .disk)
        let plain = try DatabasePool(path: directory + "/plain.sqlite")
        try plain.write { try $0.execute(sql: BenchSchema.createSQL) }
        let plainSeconds = try time { _ = try plain.write { try WriterRole.insert($0, n: 0, rows: rows, author: "plain") } }

        let group = directory + "/group"
        var configuration = GroupConfiguration(directory: group, member: try MemberName("writer"), logger: Logger(label: "bench"))
        configuration.migrator = BenchSchema.migrator
        configuration.pruneInterval = nil
        let store = try GroupStore(configuration)
        defer { store.closeBlocking() }
        let peer = try bench.spawn("member", ["--group", group, "--member", "peer", "--expect", "1"])
        try bench.ready(peer)
        let trackedSeconds = try time { _ = try store.writeBlocking { try WriterRole.insert($0, n: 0, rows: rows, author: "writer") } }
        let committed = ProcessFacts.nowMicros
        store.flushPublicationsBlocking()
        try bench.finish(peer, timeout: 300)
        let received = Bench.fields(peer.output, "D").first.flatMap { Double($0[2]) } ?? .nan
        // The bulk transaction's payload: the newest (names sort by sequence
        // number; the migration's, which names the new table, comes before it).
        let newest = try FileManager.default.contentsOfDirectory(atPath: group + "/members/writer").filter { $0.hasSuffix(".json") }.max()
        let payload =
            try newest.flatMap { try FileManager.default.attributesOfItem(atPath: group + "/members/writer/" + $0)[.size] as? Int } ?? 0
        return [
            TableRow(
                section: section, what: "tracked commit", unit: "s", value: trackedSeconds,
                reference: String(format: "plain GRDB %.2f s", plainSeconds), ratio: trackedSeconds / plainSeconds),
            TableRow(
                section: section, what: "payload file on disk (keys capped at 10,000; the rest is in the history)", unit: "bytes",
                value: Double(payload)),
            TableRow(section: section, what: "commit returned → peer process has the save", unit: "s", value: (received - committed) / 1e6),
        ]
    }

    private func time(_ body: () throws -> Void) throws -> Double {
        let start = monotonicSeconds()
        try body()
        return monotonicSeconds() - start
    }
}
