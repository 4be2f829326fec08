import Foundation
import Subprocesses

/// Four members writing at a steady rate for a long time: disk use, payload
/// files and memory stay flat; nothing is lost.
struct SoakTrial {
    let suite: FaultSuite

    func run(seconds: Int) throws -> [Outcome] {
        let group = suite.newGroup("soak")
        // 50 transactions/s each; all join before anyone writes (a member is owed
        // only what is committed after it joined).
        let configuration = ["--writes", "100000000", "--interval-us", "20000", "--wait-for-go", "--stop-on-stdin"]
        let members = try (1...4).map { index in
            try suite.spawn(
                "groupstore-peer", ["--group", group, "--member", "m\(index)", "--log-level", "warning"] + configuration,
                name: "m\(index)")
        }
        for member in members where !member.waitForError(containing: "peer: ready", timeout: 30) {
            throw FaultFailure("\(member.name) did not start")
        }
        for member in members { member.writeLine("go") }
        var samples: [(disk: Double, payloads: Int, memory: Double)] = []
        let end = Date(timeIntervalSinceNow: TimeInterval(seconds))
        while Date() < end {
            usleep(10_000_000)  // one sample every 10 s (a measurement interval, not synchronisation)
            let files = (try? FileManager.default.subpathsOfDirectory(atPath: group)) ?? []
            var bytes = 0.0
            var payloads = 0
            for file in files {
                if file.hasSuffix(".json") { payloads += 1 }
                bytes += ((try? FileManager.default.attributesOfItem(atPath: group + "/" + file))?[.size] as? NSNumber)?.doubleValue ?? 0
            }
            let memory = members.map { Self.residentMB($0.pid) }.max() ?? .nan
            samples.append((bytes / 1_048_576, payloads, memory))
        }
        // Stop writing everywhere, let every member receive everything, then check exactly.
        for member in members { member.writeLine("stop") }
        for member in members where !member.waitForError(containing: "peer: wrote", timeout: 60) {
            throw FaultFailure("\(member.name) did not stop writing")
        }
        let committed = try suite.committedItems(group)
        var losses = 0
        var duplicates = 0
        for (index, member) in members.enumerated() {
            let author = "m\(index + 1)"
            let expected = Set(committed.filter { $0.1 != author }.map(\.0))
            _ = member.wait(timeout: 120) { lines, _, _ in
                expected.isSubset(of: Set(FaultSuite.saves(lines).flatMap(\.keys))) ? true : nil
            }
            let keys = FaultSuite.saves(member.output).flatMap(\.keys)
            losses += expected.subtracting(keys).count
            duplicates += keys.count - Set(keys).count
        }
        for member in members { member.send(SIGTERM) }
        for member in members { _ = member.waitForExit(timeout: 60) }
        guard let first = samples.dropFirst().first, let last = samples.last else { throw FaultFailure("too short to sample") }
        let maxDisk = samples.map(\.disk).max() ?? .nan
        let maxPayloads = samples.map(\.payloads).max() ?? 0
        let flat = last.disk < max(first.disk * 3, first.disk + 64) && last.memory < first.memory + 32
        return [
            Outcome(
                fault: "soak: 4 members × 50 transactions/s for \(seconds) s", trials: committed.count,
                passed: losses == 0 && duplicates == 0 && flat,
                figures: String(
                    format:
                        "%ld transactions, %ld lost, %ld duplicated; disk %.1f → %.1f MB (max %.1f); payload files %ld → %ld (max %ld); max member RSS %.1f → %.1f MB",
                    committed.count, losses, duplicates, first.disk, last.disk, maxDisk, first.payloads, last.payloads, maxPayloads,
                    first.memory,
                    last.memory))
        ]
    }

    static func residentMB(_ pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return .nan }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (Double(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? .nan) / 1024
        }
        return .nan
    }
}
