import Foundation
import GRDB
import XCTest

/// A save as printed by `groupstore watch --format jsonl` / `groupstore-peer`.
struct PrintedSave {
    var seq: Int64
    var author: String
    var committedAt: Double
    var receivedAt: Double?
    var resync: Bool
    /// Inserted, updated and deleted integer keys per entity.
    var inserted: [String: [Int64]] = [:]
    var updated: [String: [Int64]] = [:]
    var deleted: [String: [Int64]] = [:]
    /// Entities reported as reset (created, dropped, renamed, rewritten).
    var reset: Set<String> = []

    /// Whether it only announces tables created (or otherwise reset), with no key.
    var isOnlyReset: Bool {
        !reset.isEmpty && (inserted.values.joined().isEmpty && updated.values.joined().isEmpty && deleted.values.joined().isEmpty)
    }

    init(line: String) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let seq = (object["seq"] as? NSNumber)?.int64Value,
            let author = object["author"] as? String,
            let committedAt = (object["committedAt"] as? NSNumber)?.doubleValue,
            let changes = object["changes"] as? [[String: Any]]
        else { throw HarnessError(message: "not a save line: \(line)") }
        self.seq = seq
        self.author = author
        self.committedAt = committedAt
        self.receivedAt = (object["receivedAt"] as? NSNumber)?.doubleValue
        self.resync = object["resync"] as? Bool ?? false
        for change in changes {
            guard let entity = change["entity"] as? String else { throw HarnessError(message: "no entity: \(line)") }
            func keys(_ field: String) -> [Int64] { (change[field] as? [NSNumber] ?? []).map(\.int64Value) }
            inserted[entity] = keys("inserted")
            updated[entity] = keys("updated")
            deleted[entity] = keys("deleted")
            if change["reset"] as? Bool == true { reset.insert(entity) }
        }
    }
}

/// Base of the multi-process tests: a fresh group directory per test, and
/// helpers that spawn the built executables.
class ProcessTestCase: XCTestCase {
    var group = ""
    private var children: [ChildProcess] = []

    override func setUpWithError() throws {
        group =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("groupstore-test-\(UUID().uuidString.prefix(8))").path
    }

    override func tearDownWithError() throws {
        for child in children { child.stop() }
        children = []
        try? FileManager.default.removeItem(atPath: group)
    }

    func spawn(_ executable: String, _ arguments: [String], name: String? = nil) throws -> ChildProcess {
        let child = try ChildProcess(executable, arguments, name: name)
        children.append(child)
        return child
    }

    /// `groupstore watch --format jsonl`, returned once it has joined.
    func watch(_ member: String, extra: [String] = []) throws -> ChildProcess {
        let child = try spawn(
            "groupstore", ["watch", "--group", group, "--member", member, "--format", "jsonl"] + extra, name: "watch \(member)")
        try child.waitForStderr("groupstore: watching")
        return child
    }

    /// `groupstore exec`; asserts it succeeded and returns its stdout.
    @discardableResult
    func exec(_ member: String, _ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let child = try spawn("groupstore", ["exec", "--group", group, "--member", member, "--sql", sql], name: "exec \(member)")
        let status = try child.waitForExit(file: file, line: line)
        XCTAssertEqual(status, 0, "exec failed: \(child.errors.joined(separator: "\n"))", file: file, line: line)
        return child.output.joined(separator: "\n")
    }

    /// `groupstore exec` of SQL that changes a tracked table; returns the
    /// sequence number it printed last (`seq N`).
    @discardableResult
    func execSeq(_ member: String, _ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let printed = try exec(member, sql, file: file, line: line)
        guard let seq = rowsAndSeq(printed).seq else {
            throw HarnessError(message: "exec printed no sequence number: \(printed.debugDescription)")
        }
        return seq
    }

    /// The lines `exec` printed before its last, and the sequence number that
    /// last line (`seq N`) gives (numbers grow, but are not consecutive).
    func rowsAndSeq(_ printed: String) -> (rows: [String], seq: Int?) {
        var lines = printed.components(separatedBy: "\n")
        let last = lines.popLast() ?? ""
        return (lines, last.hasPrefix("seq ") ? Int(last.dropFirst(4)) : nil)
    }

    /// `groupstore-peer`, returned once it is ready.
    func peer(_ member: String, _ arguments: [String]) throws -> ChildProcess {
        let child = try spawn(
            "groupstore-peer", ["--group", group, "--member", member] + arguments, name: "peer \(member)")
        try child.waitForStderr("peer: ready")
        return child
    }

    /// Reads the shared database directly (read-only), as an outside observer.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: group + "/store.sqlite", configuration: configuration)
        return try queue.read(body)
    }

    /// Parses every line as a save.
    func saves(_ lines: [String]) throws -> [PrintedSave] {
        try lines.map(PrintedSave.init(line:))
    }

    /// Asserts strictly increasing sequence numbers (in order, none twice).
    func assertInOrderOnce(_ saves: [PrintedSave], _ who: String, file: StaticString = #filePath, line: UInt = #line) {
        for (previous, next) in zip(saves, saves.dropFirst()) where next.seq <= previous.seq {
            XCTFail("\(who): seq \(next.seq) delivered after \(previous.seq)", file: file, line: line)
            return
        }
    }
}
