import Foundation
import Subprocesses

/// Row 1: commit in one process → save delivered in others, with 2, 4 and 8
/// members, single-row transactions every millisecond, on tmpfs and disk;
/// beside the bare inotify publish→read between two processes.
struct LatencyScenario {
    let bench: Bench

    struct Result {
        var rows: [TableRow]
        var twoMembersTmpfs: Distribution?
    }

    func run() throws -> Result {
        let samples = bench.quick ? 300 : 2000
        var rows: [TableRow] = []
        var reference: Distribution?
        for storage in [Bench.Storage.tmpfs, .disk] {
            let bare = try bareInotify(storage, samples: samples)
            rows.append(
                TableRow(
                    section: "1. propagation latency, 1 commit/ms", what: "bare inotify publish→read, 2 processes (\(storage))", unit: "µs",
                    distribution: bare, reference: "physical limit", target: storage == .tmpfs ? "C: 15 / 33 µs" : "C: 16 / 35 µs"))
            for members in [2, 4, 8] {
                let latency = try groupStore(members: members, storage, samples: samples)
                if members == 2 && storage == .tmpfs { reference = latency }
                let target: String
                switch (members, storage) {
                case (2, .tmpfs): target = "≤ 100 µs / ≤ 1 ms"
                case (8, .tmpfs): target = "≤ 300 µs / ≤ 3 ms"
                default: target = ""
                }
                rows.append(
                    TableRow(
                        section: "1. propagation latency, 1 commit/ms",
                        what: "GroupStore, \(members) members, until the last has it (\(storage))", unit: "µs", distribution: latency,
                        reference: String(format: "bare inotify %.0f µs", bare.median), ratio: latency.median / bare.median,
                        target: target))
            }
        }
        return Result(rows: rows, twoMembersTmpfs: reference)
    }

    /// Temp file + rename into a watched folder, read by another process.
    private func bareInotify(_ storage: Bench.Storage, samples: Int) throws -> Distribution {
        let directory = try bench.directory("inotify-\(storage)", on: storage)
        for folder in ["in", "tmp"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + folder, withIntermediateDirectories: false)
        }
        let reader = try bench.spawn("inotify-reader", ["--directory", directory, "--count", "\(samples)"])
        try bench.ready(reader)
        let writer = try bench.spawn("inotify-writer", ["--directory", directory, "--count", "\(samples)", "--interval-us", "1000"])
        try bench.finish(writer)
        try bench.finish(reader)
        return Distribution(Bench.fields(reader.output, "L").compactMap { Double($0[0]) })
    }

    /// One writer, `members - 1` readers; per transaction, the latest reader's delay.
    private func groupStore(members: Int, _ storage: Bench.Storage, samples: Int) throws -> Distribution {
        let group = try bench.directory("latency-\(members)-\(storage)", on: storage)
        let readers = try (1..<members).map { index in
            try bench.spawn("member", ["--group", group, "--member", "reader-\(index)", "--expect", "\(samples)", "--print-each"])
        }
        for reader in readers { try bench.ready(reader) }
        let writer = try bench.spawn(
            "writer", ["--group", group, "--count", "\(samples)", "--interval-us", "1000"])
        try bench.finish(writer)
        for reader in readers { try bench.finish(reader, timeout: 60) }
        var latest: [Substring: Double] = [:]
        for reader in readers {
            for fields in Bench.fields(reader.output, "R") {
                guard let received = Double(fields[1]), let committed = Double(fields[2]) else { continue }
                latest[fields[0]] = max(latest[fields[0]] ?? 0, received - committed)
            }
        }
        return Distribution(Array(latest.values))
    }
}
