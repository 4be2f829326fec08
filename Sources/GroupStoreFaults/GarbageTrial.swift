import Foundation
import Subprocesses

/// Random and mutated files dropped into member folders while the group runs:
/// each is skipped (and logged), nothing crashes, nothing is lost.
struct GarbageTrial {
    let suite: FaultSuite

    func run(files: Int) throws -> [Outcome] {
        let group = suite.newGroup("garbage")
        let watcher = try suite.watch(group, "watcher")
        let writes = 2_000
        let writer = try suite.peer(group, "writer", writes: writes, intervalUs: 500)
        try FileManager.default.createDirectory(atPath: group + "/members/intruder", withIntermediateDirectories: false)
        var generator = SeededGenerator(seed: 0x6172_6261_6765)
        let folders = ["writer", "watcher", "intruder"]
        let sample = Array(
            #"{"format":2,"seq":7,"author":"writer","committedAt":1.5,"truncated":false,"changes":[{"entity":"items","inserted":[7],"updated":[],"deleted":[],"updatedColumns":[]}]}"#
                .utf8)
        for index in 0..<files {
            let name: String
            switch index % 4 {
            case 0: name = Self.payloadName(Int.random(in: 1...10_000_000, using: &generator), version: 1)
            case 1: name = Self.payloadName(index, version: Int.random(in: 2...99, using: &generator))
            case 2: name = "junk-\(index)"
            default: name = Self.payloadName(index, version: 1)
            }
            var bytes: [UInt8]
            if index % 2 == 0 {
                bytes = (0..<Int.random(in: 0...600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = sample
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                if index % 3 == 0 { bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator))) }
            }
            let temp = group + "/tmp/garbage-\(index)"
            _ = FileManager.default.createFile(atPath: temp, contents: Data(bytes))
            rename(temp, group + "/members/" + folders[index % folders.count] + "/" + name)
        }
        guard writer.waitForExit(timeout: 300) == 0 else { throw FaultFailure("writer failed: \(writer.errors.suffix(3))") }
        // One save announces the `items` table the writer created, then one
        // per row: waiting for `writes` lines left the last row's save out
        // of the check whenever it was printed a moment later.
        guard suite.waitForLines(watcher, writes + 1, timeout: 120) else {
            throw FaultFailure("watcher delivered \(watcher.output.count) of \(writes + 1)")
        }
        let keys = FaultSuite.saves(watcher.output).flatMap(\.keys)
        let committed = try suite.committedItems(group).map(\.0)
        let logged = watcher.errors.filter { $0.contains("skipping") || $0.contains("ignoring") }.count
        watcher.send(SIGTERM)
        let stopped = watcher.waitForExit(timeout: 30) == 0
        return [
            Outcome(
                fault: "random and mutated files dropped into member folders while the group runs", trials: files,
                passed: keys == committed && stopped && logged > 0,
                figures:
                    "\(files) files dropped; \(logged) skip notices logged; \(keys.count) of \(committed.count) transactions delivered, no crash"
            )
        ]
    }
}

extension GarbageTrial {
    /// A name in the payload pattern: 20 digits, `.v<version>.json`.
    static func payloadName(_ seq: Int, version: Int) -> String {
        let digits = String(seq)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".v\(version).json"
    }
}
