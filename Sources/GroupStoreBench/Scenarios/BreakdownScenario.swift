import Foundation
import Subprocesses

/// Row 1c: where the time between a commit and the subscriber goes, stage by
/// stage, for 2 and 8 members on tmpfs (1 commit/ms). Members and writer run
/// traced (see ``MemberRole`` and ``WriterRole``); for each transaction the
/// member that got it last is the one broken down.
struct BreakdownScenario {
    let bench: Bench

    private struct Sample {
        var committed: Double
        var returned: Double?
        var trace: [Substring]
        var received: Double
    }

    func run() throws -> [TableRow] {
        let samples = bench.quick ? 300 : 2000
        var rows: [TableRow] = []
        for members in [2, 8] {
            rows += try breakdown(members: members, samples: samples)
        }
        return rows
    }

    private func breakdown(members: Int, samples: Int) throws -> [TableRow] {
        let section = "1c. where the time goes: commit → subscriber, \(members) members (tmpfs), traced run"
        let group = try bench.directory("breakdown-\(members)", on: .tmpfs)
        let readers = try (1..<members).map { index in
            try bench.spawn(
                "member", ["--group", group, "--member", "reader-\(index)", "--expect", "\(samples)", "--print-each", "--trace"])
        }
        for reader in readers { try bench.ready(reader) }
        let writer = try bench.spawn("writer", ["--group", group, "--count", "\(samples)", "--interval-us", "1000", "--trace"])
        try bench.finish(writer)
        for reader in readers { try bench.finish(reader, timeout: 60) }

        var returned: [Substring: Double] = [:]
        for fields in Bench.fields(writer.output, "K") where fields.count == 2 { returned[fields[0]] = Double(fields[1]) }
        // Per seq, the reader that received it last, with its trace.
        var latest: [Substring: Sample] = [:]
        for reader in readers {
            var traces: [Substring: [Substring]] = [:]
            for fields in Bench.fields(reader.output, "T") where fields.count == 7 { traces[fields[0]] = fields }
            for fields in Bench.fields(reader.output, "R") where fields.count == 4 {
                guard let received = Double(fields[1]), let committed = Double(fields[2]), let trace = traces[fields[0]] else { continue }
                if let previous = latest[fields[0]], previous.received >= received { continue }
                latest[fields[0]] = Sample(committed: committed, returned: returned[fields[3]], trace: trace, received: received)
            }
        }
        guard !latest.isEmpty else { throw BenchFailure("no traced deliveries") }

        // Stage times from the commit (committedAt is taken inside the
        // transaction, just before COMMIT).
        let names = [
            "COMMIT done (write returned in the writer)", "first wake-up in the member", "merge start (the merge that found it)",
            "history read (one read transaction on the merger's own connection)", "handed to the feed and the notifier",
            "subscriber running (for await)",
        ]
        var stages = [[Double]](repeating: [], count: names.count)
        // GRDB's observers are notified after the hand-over, beside the
        // subscriber's wake-up rather than before it.
        var notified: [Double] = []
        var wakes: [Substring: Int] = [:]
        for sample in latest.values {
            let t = sample.trace
            guard let woke = Double(t[2]), let start = Double(t[3]), let history = Double(t[4]), let handed = Double(t[5]),
                let observers = Double(t[6])
            else { continue }
            wakes[t[1], default: 0] += 1
            notified.append(observers - handed)
            let times = [sample.returned ?? .nan, woke, start, history, handed, sample.received]
            var previous = sample.committed
            for (index, time) in times.enumerated() {
                if index == 0 {
                    if !time.isNaN { stages[0].append(time - sample.committed) }
                    continue
                }
                stages[index].append(time - previous)
                previous = time
            }
        }
        var rows: [TableRow] = []
        var cumulative = 0.0
        for (index, name) in names.enumerated() {
            let distribution = Distribution(stages[index])
            let reference: String
            if index == 0 {
                reference = "from the commit's start"
            } else {
                cumulative += distribution.median
                reference = String(format: "Σ medians from commit %.0f µs", cumulative)
            }
            rows.append(
                TableRow(
                    section: section, what: (index == 0 ? "" : "+ ") + name, unit: "µs", distribution: distribution, reference: reference))
        }
        rows.append(
            TableRow(
                section: section, what: "GRDB observers notified, after the hand-over (off the subscriber's path)", unit: "µs",
                distribution: Distribution(notified), reference: "from the hand-over"))
        let total = Double(wakes.values.reduce(0, +))
        let share = wakes.sorted { $0.value > $1.value }.map {
            String(format: "%@ %.0f %%", String($0.key), Double($0.value) / total * 100)
        }
        rows.append(TableRow(section: section, what: "first wake-up was", unit: "", reference: share.joined(separator: ", ")))
        return rows
    }
}
