import Foundation
import Subprocesses

/// Row 2: one writer committing single-row transactions flat out while 3 peers
/// follow, against the same writer with plain GRDB and no library.
struct ThroughputScenario {
    let bench: Bench

    func run() throws -> [TableRow] {
        let seconds = bench.quick ? 2.0 : 10.0
        let section = "2. sustained throughput, single-row transactions"
        let plainGroup = try bench.directory("throughput-plain")
        let plain = try bench.spawn("writer", ["--group", plainGroup, "--count", "100000000", "--seconds", "\(seconds)", "--plain"])
        try bench.finish(plain)
        let plainRate = rate(plain.output)

        // The ceiling for any number of followers: the same writer with none.
        let aloneGroup = try bench.directory("throughput-alone")
        let alone = try bench.spawn("writer", ["--group", aloneGroup, "--count", "100000000", "--seconds", "\(seconds)"])
        try bench.finish(alone)
        let aloneRate = rate(alone.output)

        let group = try bench.directory("throughput")
        let peers = try (1...3).map {
            try bench.spawn("member", ["--group", group, "--member", "peer-\($0)", "--print-each", "--key-from-input"])
        }
        for peer in peers { try bench.ready(peer) }
        let writer = try bench.spawn("writer", ["--group", group, "--count", "100000000", "--seconds", "\(seconds)"])
        try bench.finish(writer)
        let writerFields = Bench.fields(writer.output, "W").first
        let written = Int(writerFields?[0] ?? "0") ?? 0
        // The writer's own clock when its last commit returned (wall time, as the peers' R lines).
        let writerEnd = writerFields.flatMap { $0.count > 3 ? Double($0[3]) : nil } ?? ProcessFacts.nowMicros
        // Every peer must deliver everything; how long after the writer stopped?
        var drain: [Double] = []
        for peer in peers {
            // The writer inserted rows 1...written.
            peer.writeLine("until-key \(written)")
            try bench.finish(peer, timeout: 120)
            let delivered = Set(Bench.fields(peer.output, "R").flatMap { $0[3].split(separator: ",") }).count
            guard delivered >= written else { throw BenchFailure("\(peer.name) delivered \(delivered) of \(written) rows") }
            drain.append((Double(Bench.fields(peer.output, "R").last?[1] ?? "0") ?? 0) - writerEnd)
        }
        // Lag of the slowest peer per transaction, in the first and the last second.
        var lag: [Substring: Double] = [:]
        for peer in peers {
            for fields in Bench.fields(peer.output, "R") {
                guard let received = Double(fields[1]), let committed = Double(fields[2]) else { continue }
                lag[fields[0]] = max(lag[fields[0]] ?? 0, received - committed)
            }
        }
        let rate = Double(written) / seconds
        return [
            TableRow(
                section: section, what: "writer with 3 peers following", unit: "tx/s", value: rate,
                reference: String(format: "plain GRDB, no peers: %.0f tx/s", plainRate), ratio: rate / plainRate,
                target: "≥ 0.5×"),
            TableRow(
                section: section, what: "ceiling: the same writer with no peer", unit: "tx/s", value: aloneRate,
                reference: String(format: "plain GRDB, no peers: %.0f tx/s", plainRate), ratio: aloneRate / plainRate,
                target: "≥ 0.5×"),
            TableRow(
                section: section, what: "peers' lag behind the writer (slowest of 3)", unit: "ms",
                distribution: Distribution(lag.values.map { $0 / 1000 }),
                reference: String(format: "all delivered %.0f ms after the writer stopped", (drain.max() ?? 0) / 1000),
                target: "bounded"),
        ]
    }

    private func rate(_ output: [String]) -> Double {
        guard let fields = Bench.fields(output, "W").first, let count = Double(fields[0]), let seconds = Double(fields[1]) else {
            return .nan
        }
        return count / seconds
    }
}
