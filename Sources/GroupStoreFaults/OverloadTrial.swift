import Foundation
import Subprocesses

/// A member stopped (SIGSTOP) while a peer commits many transactions, then
/// continued: the inotify queue overflows; everything is delivered, in order,
/// with bounded memory.
struct OverloadTrial {
    let suite: FaultSuite

    func run(transactions: Int) throws -> [Outcome] {
        let group = suite.newGroup("overload")
        // The writer's folder exists before the watcher starts, so its payloads
        // queue events for the stopped watcher too (and overflow the queue).
        _ = try suite.exec(group, "writer", "SELECT 1")
        // A small queue for the stalled member, so the overflow is certain even
        // though a busy publisher skips payloads (root only; restored at once).
        var stalledMember: Subprocess?
        let small = try InotifyQueueLimit.lowered(to: 1024) { stalledMember = try suite.watch(group, "stalled") }
        let stalled = stalledMember!
        stalled.send(SIGSTOP)
        let started = Date()
        let writer = try suite.peer(group, "writer", writes: transactions)
        guard writer.waitForExit(timeout: 1800) == 0 else { throw FaultFailure("writer failed: \(writer.errors.suffix(3))") }
        let writing = Date().timeIntervalSince(started)
        stalled.send(SIGCONT)
        let resumed = Date()
        // One save announces the `items` table the writer created, then one per row.
        guard suite.waitForLines(stalled, transactions + 1, timeout: 600) else {
            throw FaultFailure("delivered \(stalled.output.count) of \(transactions + 1)")
        }
        let catchUp = Date().timeIntervalSince(resumed)
        let memory = FaultSuite.peakMemoryMB(stalled.pid)
        let delivered = FaultSuite.saves(stalled.output)
        let keys = delivered.flatMap(\.keys)
        let committed = try suite.committedItems(group).map(\.0)
        let inOrder = zip(delivered, delivered.dropFirst()).allSatisfy { $0.seq < $1.seq }
        let overflowed = stalled.errors.contains { $0.contains("inotify queue overflowed") }
        stalled.send(SIGTERM)
        _ = stalled.waitForExit(timeout: 30)
        let passed = keys == committed && inOrder && memory < 256 && (overflowed || !small)
        return [
            Outcome(
                fault: "member stopped (SIGSTOP) during \(transactions) commits, then continued", trials: 1, passed: passed,
                figures: String(
                    format:
                        "%ld of %ld delivered in order, none twice; inotify overflow %@%@; written in %.1f s, caught up in %.1f s; peak RSS %.1f MB",
                    keys.count, committed.count, overflowed ? "reported and rescanned" : "not reached",
                    small ? " (queue limit lowered to 1,024 for this member)" : "", writing, catchUp, memory))
        ]
    }
}
