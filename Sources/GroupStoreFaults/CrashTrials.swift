import Foundation
import Subprocesses

/// Writers and members killed with SIGKILL at random instants while several
/// processes write. After each trial: every committed transaction (counted
/// in the database) reached the surviving member exactly once, in order; the
/// database passes `integrity_check`; every killed name can be used again at
/// once; a killed member catches up on restart (at least once).
struct CrashTrials {
    let suite: FaultSuite

    func run(trials: Int) throws -> [Outcome] {
        var failures: [String] = []
        var checked = 0
        var killed = 0
        var leftovers = 0
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<trials {
            do {
                let result = try runTrial(trial, random: &generator)
                checked += result.checked
                killed += result.killed
                leftovers += result.temporaryFiles
            } catch {
                failures.append("trial \(trial): \(error)")
                if failures.count >= 3 { break }
            }
        }
        return [
            Outcome(
                fault: "SIGKILL of writers and members at random instants", trials: trials, passed: failures.isEmpty,
                figures: failures.isEmpty
                    ? "\(killed) processes killed; \(checked) committed transactions checked, 0 lost, 0 duplicated; "
                        + "integrity_check ok every time; every killed name reusable at once; \(leftovers) temp files left (pruned after an hour, never blocking)"
                    : failures.joined(separator: "; "))
        ]
    }

    private func runTrial(_ trial: Int, random: inout SystemRandomNumberGenerator) throws -> (
        checked: Int, killed: Int, temporaryFiles: Int
    ) {
        let group = suite.newGroup("crash")
        let survivor = try suite.watch(group, "survivor")
        let victim = try suite.watch(group, "victim")
        let writers = try ["w1", "w2"].map {
            try suite.peer(group, $0, writes: 1_000_000, intervalUs: Int.random(in: 0...400, using: &random))
        }
        // The random instant: somewhere in the first few hundred milliseconds of writing.
        usleep(UInt32.random(in: 20_000...250_000, using: &random))
        var candidates: [(String, Subprocess)] = [("w1", writers[0]), ("w2", writers[1]), ("victim", victim)]
        candidates.shuffle(using: &random)
        let victims = Array(candidates.prefix(Int.random(in: 1...3, using: &random)))
        for (_, child) in victims {
            child.send(SIGKILL)
            usleep(UInt32.random(in: 0...30_000, using: &random))
        }
        // Writers still alive stop gracefully.
        for writer in writers where !victims.contains(where: { $0.1 === writer }) { writer.send(SIGTERM) }
        for writer in writers { _ = writer.waitForExit(timeout: 30) }
        _ = victims.map { $0.1.waitForExit(timeout: 30) }

        let committed = try suite.committedItems(group)
        // Counted in keys: the survivor may also have the save announcing the
        // `items` table (when it joined before the first writer created it).
        let caughtUp = survivor.wait(timeout: 60) { lines, _, _ in
            FaultSuite.saves(lines).reduce(0) { $0 + $1.keys.count } >= committed.count ? true : nil
        }
        guard caughtUp != nil else {
            throw FaultFailure("survivor delivered \(survivor.output.count) saves for \(committed.count) transactions")
        }
        let delivered = FaultSuite.saves(survivor.output)
        for (previous, next) in zip(delivered, delivered.dropFirst()) where next.seq <= previous.seq {
            throw FaultFailure("survivor: seq \(next.seq) after \(previous.seq)")
        }
        let keys = delivered.flatMap(\.keys)
        guard keys == committed.map(\.0) else {
            throw FaultFailure("survivor delivered \(keys.count) keys for \(committed.count) committed rows (lost or duplicated)")
        }
        guard try suite.integrityOK(group) else { throw FaultFailure("integrity_check failed") }

        // Every killed name is free again, and a killed member catches up.
        for (name, child) in victims {
            if name == "victim" {
                let before = Set(FaultSuite.saves(child.output).flatMap(\.keys))
                let back = try suite.watch(group, "victim")
                let missing = Set(committed.map(\.0)).subtracting(before)
                let caughtUp =
                    back.wait(timeout: 30) { lines, _, _ in
                        missing.isSubset(of: Set(FaultSuite.saves(lines).flatMap(\.keys))) ? true : nil
                    } ?? false
                guard caughtUp else { throw FaultFailure("restarted member did not catch up on \(missing.count) transactions") }
                back.send(SIGTERM)
                _ = back.waitForExit(timeout: 30)
            } else {
                let (status, errors) = try suite.exec(group, name, "SELECT 1")
                guard status == 0 else { throw FaultFailure("killed writer's name \(name) is not reusable: \(errors)") }
            }
        }
        survivor.send(SIGTERM)
        guard survivor.waitForExit(timeout: 30) == 0 else { throw FaultFailure("survivor did not stop cleanly") }
        let temporaries = (try? FileManager.default.contentsOfDirectory(atPath: group + "/tmp"))?.count ?? 0
        try? FileManager.default.removeItem(atPath: group)
        return (committed.count, victims.count, temporaries)
    }
}
