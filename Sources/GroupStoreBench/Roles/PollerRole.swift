import ArgumentParser
import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#endif

/// The usual alternative: poll `PRAGMA data_version` every `--interval-ms`.
/// Prints `C <cpu s> <wall s>` for an idle phase, then `L <latency µs>` for
/// each change it sees until it has `--expect`.
struct PollerRole: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "poller", shouldDisplay: false)

    @Option var database: String
    @Option var intervalMs: Double
    @Option var expect: Int
    @Option var idleSeconds: Double = 2

    func run() throws {
        let queue = try DatabaseQueue(path: database)
        let interval = intervalMs / 1000
        var version = try queue.read { try Int.fetchOne($0, sql: "PRAGMA data_version") }
        // Idle phase: nothing is written; what does polling cost?
        let cpuBefore = ProcessFacts.cpuSeconds
        let idleEnd = monotonicSeconds() + idleSeconds
        var next = monotonicSeconds()
        while monotonicSeconds() < idleEnd {
            version = try queue.read { try Int.fetchOne($0, sql: "PRAGMA data_version") }
            next += interval
            sleepUntil(next)
        }
        emit("C \(ProcessFacts.cpuSeconds - cpuBefore) \(idleSeconds)")
        FileHandle.standardError.write(Data("poller ready\n".utf8))
        var seen = 0
        next = monotonicSeconds()
        while seen < expect {
            let (current, committedAt) = try queue.read { db -> (Int?, Double?) in
                (
                    try Int.fetchOne(db, sql: "PRAGMA data_version"),
                    try Double.fetchOne(db, sql: "SELECT committed_at FROM items ORDER BY id DESC LIMIT 1")
                )
            }
            if current != version {
                version = current
                if let committedAt {
                    emit("L \(ProcessFacts.nowMicros - committedAt * 1e6)")
                    seen += 1
                }
            }
            next += interval
            sleepUntil(next)
        }
    }
}
