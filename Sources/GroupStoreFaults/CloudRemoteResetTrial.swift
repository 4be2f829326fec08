import Foundation
import GRDB
import GroupStore
import Subprocesses

/// The remote replaced by a fresh one, or restored from an older copy,
/// under running bridges (issue 30): nothing lost, nothing rolled back, and
/// the groups and the remote brought to one state.
///
/// Each trial: groups A and B share one embedded remote; A's writer (this
/// process, through the library) writes `item` rows in bursts while both
/// run `groupstore cloud run`. Once B holds A's rows, the remote is copied
/// (`sqlite3 .backup`); A writes on and B takes it in; then the remote is
/// restored from the copy in place (`sqlite3 .restore`) — or, in the
/// `replaced` mode, deleted with its `-wal` and `-shm` and set up again
/// (`groupstore cloud setup`) — while A writes on. Then writing stops and,
/// once both statuses show nothing pending (bounded), it checks: A's rows
/// are what the writer last wrote, B's and the remote's live records equal
/// them, nothing is parked, no sync failed last, a bridge reported the
/// reset (`remoteReset`), every bridge exits 0 on SIGTERM.
struct CloudRemoteResetTrial {
    enum Mode: String { case replaced, restored }

    let suite: FaultSuite
    var harness: CloudHarness { CloudHarness(suite: suite) }
    static let settleBound: TimeInterval = 90

    func run(trials: Int, mode: Mode, seed: UInt64) -> Outcome {
        var failures: [String] = []
        var settle = Durations()
        var transactions = 0
        var records = 0
        for trial in 0..<trials {
            let trialSeed = seed &+ UInt64(trial)
            let folder: String
            do { folder = try suite.newFolder("cloud-\(mode.rawValue)") } catch {
                failures.append("trial \(trial + 1): \(error)")
                continue
            }
            do {
                let figures = try runTrial(in: folder, mode: mode, seed: trialSeed)
                settle.add(figures.settled)
                transactions += figures.transactions
                records += figures.records
                suite.finish(folder: folder, failed: false)
                FileHandle.standardError.write(Data("faults: cloud remote \(mode.rawValue) trial \(trial + 1)/\(trials) held\n".utf8))
            } catch {
                let kept = suite.finish(folder: folder, failed: true)
                failures.append("trial \(trial + 1) (seed \(trialSeed)): \(error) [kept in \(kept ?? folder)]")
                FileHandle.standardError.write(
                    Data("faults: cloud remote \(mode.rawValue) trial \(trial + 1)/\(trials) FAILED (seed \(trialSeed)): \(error)\n".utf8))
            }
        }
        let figures = String(
            format:
                "seed %llu; %ld trials held: %ld transactions written in A around the %@ remote, %ld live records checked in A, B and on the remote: 0 lost, 0 rolled back; settled in median %.2f s, max %.2f s",
            seed, trials - failures.count, transactions, mode == .replaced ? "replaced" : "restored", records, settle.median, settle.max)
        return Outcome(
            fault:
                "cloud: the remote \(mode == .replaced ? "replaced by a fresh one (deleted, set up again)" : "restored in place from an older copy") under running bridges (groups A, B)",
            trials: trials, passed: failures.isEmpty,
            figures: failures.isEmpty
                ? figures : "\(failures.count) of \(trials) failed: " + failures.prefix(3).joined(separator: "; ") + ". " + figures)
    }

    private func runTrial(in folder: String, mode: Mode, seed: UInt64) throws -> (settled: TimeInterval, transactions: Int, records: Int) {
        var random = SeededGenerator(seed: seed)
        let (groupA, groupB, remote, copy) = (folder + "/A", folder + "/B", folder + "/cloud.sqlite", folder + "/copy.sqlite")
        let store = try GroupStore(.cloudTrialWriter(groupA))
        defer { store.closeBlocking() }
        try store.writeBlocking { db in try db.execute(sql: "CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER NOT NULL, note TEXT)") }
        let (status, errors) = try suite.exec(groupB, "setup", "CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER NOT NULL, note TEXT)")
        guard status == 0 else { throw FaultFailure("setting up B failed: \(errors)") }
        var bridges: [Subprocess] = []
        defer {
            for bridge in bridges { bridge.stop() }
            CloudHarness.saveOutput(bridges, in: folder)
        }
        for (group, name) in [(groupA, "A"), (groupB, "B")] {
            let bridge = try harness.bridge(group, remote: remote, tables: ["item"], name: "cloud run \(name)")
            bridges.append(bridge)
            guard CloudHarness.waitSyncing(bridge, timeout: 30) else {
                throw FaultFailure("\(name)'s bridge did not start: \(CloudHarness.tail(bridge))")
            }
        }
        var writer = ItemWriter(store: store)
        func write(bursts: Int) throws {
            for _ in 0..<bursts {
                try writer.burst(transactions: Int.random(in: 1...15, using: &random), random: &random)
                usleep(UInt32.random(in: 0...50_000, using: &random))  // spaces the bursts (no synchronisation)
            }
        }
        try write(bursts: 3)
        _ = try settle(groupA, groupB, bridges, expected: writer.expectedRows())
        try tool("/usr/bin/sqlite3", [remote, ".timeout 10000", ".backup '\(copy)'"])
        try write(bursts: 3)
        _ = try settle(groupA, groupB, bridges, expected: writer.expectedRows())
        switch mode {
        case .restored:
            try tool("/usr/bin/sqlite3", [remote, ".timeout 10000", ".restore '\(copy)'"])
        case .replaced:
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: remote + suffix) }
            try tool(suite.path(of: "groupstore"), ["cloud", "setup", "--remote", remote])
        }
        try write(bursts: Int.random(in: 1...4, using: &random))
        let expected = writer.expectedRows()
        let settled = try settle(groupA, groupB, bridges, expected: expected)
        let remoteLive = try CloudHarness.remoteRecords(remote, type: "item", columns: ["n", "note"])
        if remoteLive != expected {
            let differing = Set(remoteLive.keys).union(expected.keys).filter { remoteLive[$0] != expected[$0] }.sorted()
            throw FaultFailure(
                "the remote's live records differ at \(differing.count) keys: "
                    + differing.prefix(4).map { "\($0): wrote \(expected[$0] ?? "deleted"), remote \(remoteLive[$0] ?? "nothing")" }.joined(
                        separator: "; "))
        }
        for (name, group) in [("A", groupA), ("B", groupB)] {
            let status = try harness.status(group)
            guard status.live, status.pending == 0, status.parked == 0, status.lastError == nil else {
                throw FaultFailure(
                    "\(name)'s status after settling: live \(status.live), pending \(status.pending), parked \(status.parked) \(status.parkedRecords.prefix(3)), last error \(status.lastError ?? "none")"
                )
            }
        }
        guard bridges.contains(where: { $0.output.contains { $0.contains(#""event":"remoteReset""#) } }) else {
            throw FaultFailure("no bridge reported the remote \(mode.rawValue)")
        }
        let unclean = CloudHarness.terminate(bridges)
        guard unclean.isEmpty else { throw FaultFailure("bridges that did not exit 0 on SIGTERM: \(unclean)") }
        return (settled, writer.transactions, expected.count)
    }

    /// Waits (bounded) until A and B have nothing pending and both hold `expected`; how long it took.
    private func settle(_ groupA: String, _ groupB: String, _ bridges: [Subprocess], expected: [String: String]) throws -> TimeInterval {
        let start = Date()
        while true {
            let (statusA, statusB) = (try harness.status(groupA), try harness.status(groupB))
            let rowsA = try CloudHarness.rows(groupA, "item", columns: ["n", "note"])
            let rowsB = try CloudHarness.rows(groupB, "item", columns: ["n", "note"])
            if statusA.pending == 0 && statusB.pending == 0 && rowsA == expected && rowsB == expected {
                return Date().timeIntervalSince(start)
            }
            if Date().timeIntervalSince(start) > Self.settleBound {
                let differing = Set(rowsB.keys).union(expected.keys).filter { rowsB[$0] != expected[$0] }.sorted()
                throw FaultFailure(
                    String(format: "not settled after %.0f s: ", Self.settleBound)
                        + "A pending \(statusA.pending) parked \(statusA.parked) error \(statusA.lastError ?? "none"), A's rows \(rowsA == expected ? "as written" : "NOT as written"); "
                        + "B pending \(statusB.pending) parked \(statusB.parked) \(statusB.parkedRecords.prefix(2)) error \(statusB.lastError ?? "none"); "
                        + "\(differing.count) rows of B differ (e.g. \(differing.prefix(3).map { "\($0): wrote \(expected[$0] ?? "deleted"), B \(rowsB[$0] ?? "absent")" })); "
                        + bridges.map(CloudHarness.tail).joined(separator: "; "))
            }
            usleep(100_000)  // a poll of state, bounded above
        }
    }

    private func tool(_ path: String, _ arguments: [String]) throws {
        let child = try suite.spawn(path, arguments)
        guard child.waitForExit(timeout: 60) == 0 else { throw FaultFailure("\(path) \(arguments) failed: \(child.errors.suffix(3))") }
    }
}
