import Foundation
import Subprocesses

/// Row 5: a member that was down while 100,000 transactions were committed:
/// time from its start to having delivered them all.
struct CatchUpScenario {
    let bench: Bench

    func run() throws -> [TableRow] {
        let count = bench.quick ? 20_000 : 100_000
        let group = try bench.directory("catchup")
        // Join once so the member has a cursor, then leave.
        let first = try bench.spawn("member", ["--group", group, "--member", "late", "--join-only"])
        try bench.finish(first)
        let writer = try bench.spawn("writer", ["--group", group, "--count", "\(count)"])
        try bench.finish(writer)

        let start = ProcessFacts.nowMicros
        let late = try bench.spawn("member", ["--group", group, "--member", "late", "--expect", "\(count)"])
        try bench.finish(late, timeout: 300)
        guard let done = Bench.fields(late.output, "D").first, let last = Double(done[2]) else {
            throw BenchFailure("the late member did not report")
        }
        let seconds = (last - start) / 1e6
        return [
            TableRow(
                section: "5. catch-up", what: "member down during \(count) transactions: start → all delivered", unit: "s",
                value: seconds, reference: String(format: "%.0f tx/s delivered, process start included", Double(count) / seconds),
                target: "≤ 2 s for 100,000")
        ]
    }
}
