import Foundation
import Subprocesses

/// Row 6: the resident memory of a member while it merges 1,000,000
/// transactions, sampled every 100,000: all of it, and the anonymous part
/// (heap and stacks). The rest is pages of files mapped, most of them this
/// benchmark's own executable, which links every optional part; they
/// grow with the executable, not with what the member does.
struct MemoryScenario {
    let bench: Bench

    func run() throws -> [TableRow] {
        let count = bench.quick ? 200_000 : 1_000_000
        let group = try bench.directory("memory")
        let member = try bench.spawn("member", ["--group", group, "--member", "follower", "--expect", "\(count)"])
        try bench.ready(member)
        let writer = try bench.spawn("writer", ["--group", group, "--count", "\(count)"])
        try bench.finish(writer, timeout: 600)
        try bench.finish(member, timeout: 300)
        let lines = Bench.fields(member.output, "M")
        let samples = lines.compactMap { fields in Double(fields[1]).map { $0 / 1024 } }
        let anonymous = lines.compactMap { fields in fields.count > 2 ? Double(fields[2]).map { $0 / 1024 } : nil }
        guard let first = samples.first, let last = samples.last,
            let done = Bench.fields(member.output, "D").first, let peak = Double(done[3])
        else { throw BenchFailure("the member did not report memory") }
        return [
            TableRow(
                section: "6. memory", what: "member RSS after merging \(count) transactions", unit: "MB", value: last,
                reference: String(format: "%.1f MB after the first 100,000; peak %.1f MB", first, peak / 1024),
                target: "growth ≤ 10 MB"),
            TableRow(section: "6. memory", what: "RSS growth from 100,000 to \(count)", unit: "MB", value: last - first, target: "≤ 10 MB"),
            TableRow(
                section: "6. memory", what: "of the member's RSS: anonymous (heap, stacks) after \(count)", unit: "MB",
                value: anonymous.last ?? .nan,
                reference: String(format: "%.1f MB after the first 100,000", anonymous.first ?? .nan)),
        ]
    }
}
