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
        var cpuRow: TableRow?
        for storage in [Bench.Storage.tmpfs, .disk] {
            let bare = try bareInotify(storage, samples: samples)
            rows.append(
                TableRow(
                    section: "1. propagation latency, 1 commit/ms", what: "bare inotify publish→read, 2 processes (\(storage))", unit: "µs",
                    distribution: bare, reference: "physical limit", target: storage == .tmpfs ? "C: 15 / 33 µs" : "C: 16 / 35 µs"))
            for members in [2, 4, 8] {
                let (latency, cpu) = try groupStore(members: members, storage, samples: samples)
                if members == 2 && storage == .tmpfs {
                    reference = latency
                    cpuRow = TableRow(
                        section: "1. propagation latency, 1 commit/ms", what: "CPU per save, 2 members (tmpfs): the receiving member",
                        unit: "µs", value: cpu.member, reference: String(format: "the writer: %.0f µs per commit", cpu.writer))
                }
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
        if let cpuRow { rows.append(cpuRow) }
        // The read path with SQLite's pages memory-mapped instead of read().
        let mapped = try groupStore(members: 2, .tmpfs, samples: samples, memberArguments: ["--mmap-bytes", "\(256 << 20)"]).latency
        rows.append(
            TableRow(
                section: "1. propagation latency, 1 commit/ms", what: "GroupStore, 2 members, readers with mmap_size 256 MB (tmpfs)",
                unit: "µs", distribution: mapped,
                reference: String(format: "without mmap %.0f µs", reference?.median ?? .nan),
                ratio: reference.map { mapped.median / $0.median }))
        // The same without the hop to the subscriber's task.
        let synchronous = try groupStore(members: 2, .tmpfs, samples: samples, memberArguments: ["--synchronous"]).latency
        rows.append(
            TableRow(
                section: "1. propagation latency, 1 commit/ms", what: "GroupStore, 2 members, synchronous delivery (tmpfs)",
                unit: "µs", distribution: synchronous,
                reference: String(format: "for await %.0f µs", reference?.median ?? .nan),
                ratio: reference.map { synchronous.median / $0.median },
                target: "≤ 100 µs / ≤ 1 ms"))
        // The library's default: each save also posted as a notification
        // (one more queue hop per save), with nobody observing it.
        let notifying = try groupStore(members: 2, .tmpfs, samples: samples, memberArguments: ["--posts-notifications"]).latency
        rows.append(
            TableRow(
                section: "1. propagation latency, 1 commit/ms",
                what: "GroupStore, 2 members, also posting .groupStoreDidSave (the default; the rows above do not) (tmpfs)",
                unit: "µs", distribution: notifying,
                reference: String(format: "without %.0f µs", reference?.median ?? .nan),
                ratio: reference.map { notifying.median / $0.median }))
        // The floor: the same wake-up and reads with no Swift layer above
        // SQLite (one thread, inotify and the C API), with 2 and 8 members.
        for members in [2, 8] {
            let floor = try rawMembers(members, samples: samples)
            let library = rows.first { $0.what == "GroupStore, \(members) members, until the last has it (tmpfs)" }?.distribution
            rows.append(
                TableRow(
                    section: "1. propagation latency, 1 commit/ms",
                    what:
                        "floor: \(members) members as bare readers (inotify on the -wal, the merge's reads through SQLite's C API, no Swift layer), until the last has it (tmpfs)",
                    unit: "µs", distribution: floor.delivered,
                    reference: String(
                        format: "woken %.0f µs after the commit; GroupStore %.0f µs", floor.woken.median, library?.median ?? .nan),
                    ratio: library.map { $0.median / floor.delivered.median }, target: members == 2 ? "≤ 100 µs" : "≤ 300 µs"))
        }
        return Result(rows: rows, twoMembersTmpfs: reference)
    }

    /// `members - 1` `raw-member` roles following the `writer` role's
    /// commits: per commit, when the last one had read it, and when it was woken.
    private func rawMembers(_ members: Int, samples: Int) throws -> (delivered: Distribution, woken: Distribution) {
        let group = try bench.directory("latency-raw-\(members)", on: .tmpfs)
        // The group and its history, made by a member that leaves at once.
        try bench.finish(try bench.spawn("member", ["--group", group, "--member", "founder", "--join-only"]))
        let readers = try (1..<members).map { _ in try bench.spawn("raw-member", ["--group", group, "--expect", "\(samples)"]) }
        for reader in readers { try bench.ready(reader) }
        let writer = try bench.spawn("writer", ["--group", group, "--count", "\(samples)", "--interval-us", "1000"])
        try bench.finish(writer)
        var latest: [Substring: (delivered: Double, woken: Double)] = [:]
        for reader in readers {
            try bench.finish(reader, timeout: 60)
            for fields in Bench.fields(reader.output, "R") {
                guard fields.count >= 4, let at = Double(fields[1]), let committed = Double(fields[2]), let woken = Double(fields[3]) else {
                    continue
                }
                let previous = latest[fields[0]] ?? (0, 0)
                latest[fields[0]] = (max(previous.delivered, at - committed), max(previous.woken, woken - committed))
            }
        }
        return (Distribution(latest.values.map(\.delivered)), Distribution(latest.values.map(\.woken)))
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

    /// One writer, `members - 1` readers; per transaction, the latest reader's
    /// delay; and the CPU µs per save of the first reader and of the writer.
    private func groupStore(
        members: Int, _ storage: Bench.Storage, samples: Int, memberArguments: [String] = []
    ) throws -> (latency: Distribution, cpu: (member: Double, writer: Double)) {
        let variant = memberArguments.first.map { "-" + $0.trimmingCharacters(in: CharacterSet(charactersIn: "-")) } ?? ""
        let group = try bench.directory("latency-\(members)-\(storage)\(variant)", on: storage)
        let readers = try (1..<members).map { index in
            try bench.spawn(
                "member", ["--group", group, "--member", "reader-\(index)", "--expect", "\(samples)", "--print-each"] + memberArguments)
        }
        for reader in readers { try bench.ready(reader) }
        let writer = try bench.spawn(
            "writer", ["--group", group, "--count", "\(samples)", "--interval-us", "1000"])
        try bench.finish(writer)
        for reader in readers { try bench.finish(reader, timeout: 60) }
        // What one save costs the processes, in CPU (robust where wall-clock
        // latency is noisy): the first reader, and the writer.
        let memberCPU = Bench.fields(readers[0].output, "D").first.flatMap { $0.count > 5 ? Double($0[5]) : nil } ?? .nan
        let writerCPU = Bench.fields(writer.output, "W").first.flatMap { $0.count > 2 ? Double($0[2]) : nil } ?? .nan
        let cpu = (member: memberCPU / Double(samples) * 1e6, writer: writerCPU / Double(samples) * 1e6)
        var latest: [Substring: Double] = [:]
        for reader in readers {
            for fields in Bench.fields(reader.output, "R") {
                guard let received = Double(fields[1]), let committed = Double(fields[2]) else { continue }
                latest[fields[0]] = max(latest[fields[0]] ?? 0, received - committed)
            }
        }
        return (Distribution(Array(latest.values)), cpu)
    }
}
