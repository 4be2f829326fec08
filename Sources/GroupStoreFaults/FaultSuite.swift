import Foundation
import GRDB
import Subprocesses

/// Plumbing shared by the trials: scratch groups, the executables, checks.
///
/// `outcomes` is only touched from the main thread.
final class FaultSuite {
    var outcomes: [Outcome] = []
    private let scratch = "/tmp/groupstore-faults-\(getpid())"
    private var children: [Subprocess] = []
    private var counter = 0

    init() {
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    func cleanUp() {
        for child in children { child.stop() }
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// A path for a new group (not created).
    func newGroup(_ name: String) -> String {
        counter += 1
        return "\(scratch)/\(name)-\(counter)"
    }

    /// Starts a sibling executable (`groupstore`, `groupstore-peer`) or an absolute path.
    func spawn(_ executable: String, _ arguments: [String], name: String? = nil) throws -> Subprocess {
        let url =
            executable.hasPrefix("/") ? URL(fileURLWithPath: executable) : Subprocess.productsDirectory.appendingPathComponent(executable)
        let child = try Subprocess(url, arguments, name: name ?? executable)
        children.append(child)
        return child
    }

    func path(of executable: String) -> String {
        Subprocess.productsDirectory.appendingPathComponent(executable).path
    }

    /// `groupstore watch --format jsonl`, once it has joined.
    func watch(_ group: String, _ member: String) throws -> Subprocess {
        let child = try spawn("groupstore", ["watch", "--group", group, "--member", member, "--format", "jsonl"], name: "watch \(member)")
        guard child.waitForError(containing: "groupstore: watching", timeout: 30) else {
            throw FaultFailure("\(member) did not join: \(child.errors.suffix(3))")
        }
        return child
    }

    /// `groupstore-peer` writing `writes` rows, once it is ready.
    func peer(_ group: String, _ member: String, writes: Int, intervalUs: Int = 0) throws -> Subprocess {
        let child = try spawn(
            "groupstore-peer",
            ["--group", group, "--member", member, "--writes", "\(writes)", "--interval-us", "\(intervalUs)", "--log-level", "info"],
            name: "peer \(member)")
        guard child.waitForError(containing: "peer: ready", timeout: 30) else {
            throw FaultFailure("\(member) did not start: \(child.errors.suffix(3))")
        }
        return child
    }

    /// Runs `groupstore exec`; returns its exit status and stderr.
    func exec(_ group: String, _ member: String, _ sql: String) throws -> (Int32, [String]) {
        let child = try spawn("groupstore", ["exec", "--group", group, "--member", member, "--sql", sql])
        let status = child.waitForExit(timeout: 60) ?? -1
        return (status, child.errors)
    }

    /// Reads the group's database directly.
    func read<T>(_ group: String, _ body: (Database) throws -> T) throws -> T {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: group + "/store.sqlite", configuration: configuration).read(body)
    }

    /// The `items` rows committed, as (id, author).
    func committedItems(_ group: String) throws -> [(Int64, String)] {
        try read(group) { db in try Row.fetchAll(db, sql: "SELECT id, author FROM items ORDER BY id").map { ($0["id"], $0["author"]) } }
    }

    func integrityOK(_ group: String) throws -> Bool {
        try read(group) { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok"
    }

    /// Saves printed as JSON lines: (seq, author, inserted item keys).
    static func saves(_ lines: [String]) -> [(seq: Int64, author: String, keys: [Int64], resync: Bool)] {
        lines.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let seq = (object["seq"] as? NSNumber)?.int64Value, let author = object["author"] as? String
            else { return nil }
            let changes = object["changes"] as? [[String: Any]] ?? []
            let keys = changes.filter { $0["entity"] as? String == "items" }.flatMap {
                ($0["inserted"] as? [NSNumber] ?? []).map(\.int64Value)
            }
            return (seq, author, keys, object["resync"] as? Bool ?? false)
        }
    }

    /// Waits until `child` printed at least `count` lines.
    func waitForLines(_ child: Subprocess, _ count: Int, timeout: TimeInterval) -> Bool {
        child.wait(timeout: timeout) { lines, _, _ in lines.count >= count ? true : nil } ?? false
    }

    /// Peak resident memory of a running child, in MB.
    static func peakMemoryMB(_ pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return .nan }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return (Double(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? .nan) / 1024
        }
        return .nan
    }
}

struct FaultFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
