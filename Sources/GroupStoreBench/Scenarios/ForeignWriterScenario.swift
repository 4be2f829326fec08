import Foundation
import GRDB
import Subprocesses

/// Row 4: a separate process writing with plain SQLite (no library) →
/// the save delivered in a member.
struct ForeignWriterScenario {
    let bench: Bench

    func run() throws -> [TableRow] {
        let samples = bench.quick ? 100 : 1000
        let group = try bench.directory("foreign")
        // Commits by a writer outside the library that land before a member
        // closes the previous one are delivered together: the member stops
        // at the last row.
        let member = try bench.spawn("member", ["--group", group, "--member", "watcher", "--print-each", "--until-key", "\(samples)"])
        try bench.ready(member)
        let writer = try bench.spawn(
            "writer", ["--group", group, "--count", "\(samples)", "--plain", "--interval-us", "2000", "--jitter-us", "500"])
        try bench.finish(writer)
        try bench.finish(member, timeout: 30)
        // The writer stamped each row just before committing it.
        let committed = try DatabaseQueue(path: group + "/store.sqlite").read { db in
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, committed_at FROM items").map {
                    (String($0["id"] as Int64), $0["committed_at"] as Double)
                })
        }
        let latencies = Bench.fields(member.output, "R").flatMap { fields -> [Double] in
            guard let received = Double(fields[1]) else { return [] }
            return fields[3].split(separator: ",").compactMap { key in committed[String(key)].map { received - $0 * 1e6 } }
        }
        return [
            TableRow(
                section: "4. writer outside the library", what: "plain SQLite process commit → save in a member (tmpfs)", unit: "µs",
                distribution: Distribution(latencies), reference: "\(latencies.count) of \(samples) rows delivered",
                target: "≤ 200 µs / ≤ 2 ms")
        ]
    }
}
