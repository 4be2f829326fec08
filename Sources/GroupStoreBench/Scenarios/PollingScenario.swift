import Foundation
import Subprocesses

/// Reference (b): a peer polling `PRAGMA data_version` every 1, 10 and 100 ms,
/// its latency and its CPU while idle, against a GroupStore member's.
struct PollingScenario {
    let bench: Bench
    let groupStoreLatency: Distribution?

    func run() throws -> [TableRow] {
        var rows: [TableRow] = []
        let section = "1b. the usual alternative: polling"
        var pollingIdleCPU: [Double: Double] = [:]
        for interval in [1.0, 10.0, 100.0] {
            let samples = bench.quick ? 20 : Int(max(25, min(300, 3000 / interval)))
            let group = try bench.directory("poll-\(Int(interval))")
            // A plain database with the table and no library at all.
            let setup = try bench.spawn("writer", ["--group", group, "--count", "1", "--plain"])
            try bench.finish(setup)
            let poller = try bench.spawn(
                "poller", ["--database", group + "/store.sqlite", "--interval-ms", "\(interval)", "--expect", "\(samples)"])
            try bench.ready(poller)
            // Commits spaced wider than the interval, with jitter, so each is seen on its own.
            let writer = try bench.spawn(
                "writer",
                [
                    "--group", group, "--count", "\(samples)", "--plain", "--interval-us", "\(interval * 1300)", "--jitter-us",
                    "\(interval * 700)",
                ])
            try bench.finish(writer)
            // Two commits inside one polling interval look like one change, so
            // the poller may see fewer than were made: stop it after the last
            // commit has had time to be seen, and use what it printed.
            _ = poller.wait(timeout: interval / 1000 * 3 + 0.2) { lines, _, _ in lines.count > samples ? true : nil }
            poller.send(SIGTERM)
            _ = poller.waitForExit(timeout: 30)
            let latency = Distribution(Bench.fields(poller.output, "L").compactMap { Double($0[0]) })
            let idle = Bench.fields(poller.output, "C").first.flatMap { Double($0[0]) } ?? .nan
            pollingIdleCPU[interval] = idle / 2 * 100
            let target: String
            switch interval {
            case 1: target = "GroupStore ≥ 5× lower"
            case 100: target = "GroupStore ≥ 500× lower"
            default: target = ""
            }
            rows.append(
                TableRow(
                    section: section, what: "poll data_version every \(Int(interval)) ms: latency", unit: "µs", distribution: latency,
                    reference: groupStoreLatency.map { String(format: "GroupStore 2 members %.0f µs", $0.median) } ?? "",
                    ratio: groupStoreLatency.map { latency.median / $0.median }, target: target))
            rows.append(
                TableRow(
                    section: section, what: "poll data_version every \(Int(interval)) ms: CPU while idle", unit: "% of a core",
                    value: idle / 2 * 100))
        }
        // A GroupStore member doing nothing but watching.
        let group = try bench.directory("idle")
        let member = try bench.spawn("member", ["--group", group, "--member", "idle", "--idle-seconds", "2"])
        try bench.ready(member)
        member.send(SIGTERM)
        _ = member.waitForExit(timeout: 30)
        let idle = (Bench.fields(member.output, "C").first.flatMap { Double($0[0]) } ?? .nan) / 2 * 100
        rows.append(
            TableRow(
                section: section, what: "GroupStore member: CPU while idle", unit: "% of a core", value: idle,
                reference: String(format: "polling 1 ms: %.2f %%", pollingIdleCPU[1] ?? .nan),
                ratio: (pollingIdleCPU[1] ?? .nan) > 0 ? idle / pollingIdleCPU[1]! : nil, target: "≤ 1/10 of polling"))
        return rows
    }
}
