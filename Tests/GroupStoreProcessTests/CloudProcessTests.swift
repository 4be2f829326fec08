import Foundation
import GRDB
import Subprocesses
import XCTest

/// The cloud bridge as separate processes: `groupstore cloud run|sync|status`
/// against the embedded remote (a file), the standby taking over, signals,
/// refusals of bad input, writers outside the library, a remote gone bad,
/// and the bounded form of the fault suite's `cloud` section.
///
/// Layout per test: `root` (the base class's scratch path) holds groups `A`
/// and `B` and the remote `cloud.sqlite`.
final class CloudProcessTests: ProcessTestCase {
    var root: String { group }
    var groupA: String { root + "/A" }
    var groupB: String { root + "/B" }
    var remote: String { root + "/cloud.sqlite" }

    /// How long a standby may take to become the syncing member after the
    /// syncing one is SIGKILLed (it retries the lock every 0.25 s).
    static let takeoverBound: TimeInterval = 5

    override func setUpWithError() throws {
        try super.setUpWithError()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    // MARK: helpers

    /// `groupstore exec` in `group`; asserts success.
    func execIn(_ group: String, _ sql: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let child = try spawn("groupstore", ["exec", "--group", group, "--member", "setup", "--sql", sql], name: "exec")
        XCTAssertEqual(try child.waitForExit(file: file, line: line), 0, "exec failed: \(child.errors)", file: file, line: line)
    }

    func createNotes(_ group: String) throws {
        try execIn(group, "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT, n INTEGER)")
    }

    func cloudArguments(_ command: String, _ group: String, remote: String? = nil, tables: String = "note", extra: [String] = [])
        -> [String]
    {
        ["cloud", command, "--group", group, "--remote", remote ?? self.remote, "--tables", tables, "--user", "tester"] + extra
    }

    /// `groupstore cloud run --format jsonl`, not waited for.
    func bridge(_ group: String, name: String, extra: [String] = []) throws -> ChildProcess {
        try spawn("groupstore", cloudArguments("run", group, extra: ["--format", "jsonl"] + extra), name: name)
    }

    /// A bridge that has become its group's syncing member.
    func syncingBridge(_ group: String, name: String) throws -> ChildProcess {
        let child = try bridge(group, name: name)
        try child.waitForStderr("groupstore: syncing \(group) with \(remote)")
        return child
    }

    /// `groupstore cloud status --format json`, parsed.
    func cloudStatus(_ group: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let child = try spawn("groupstore", ["cloud", "status", "--group", group, "--format", "json"], name: "cloud status")
        XCTAssertEqual(try child.waitForExit(file: file, line: line), 0, "\(child.errors)", file: file, line: line)
        XCTAssertEqual(child.output.count, 1, "expected one JSON line: \(child.output)", file: file, line: line)
        guard let object = try JSONSerialization.jsonObject(with: Data((child.output.first ?? "").utf8)) as? [String: Any] else {
            throw HarnessError(message: "not a JSON object: \(child.output)")
        }
        return object
    }

    /// Waits (bounded) for a jsonl event line of `bridge` at or after line `from` satisfying `predicate`.
    @discardableResult
    func waitForEvent(
        _ bridge: ChildProcess, _ what: String, after from: Int = 0, timeout: TimeInterval = 30, file: StaticString = #filePath,
        line: UInt = #line, where predicate: @escaping ([String: Any]) -> Bool
    ) throws -> [String: Any] {
        try bridge.wait(what, timeout: timeout, file: file, line: line) { lines, _, _ in
            lines.dropFirst(from).lazy.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first(where: predicate)
        }
    }

    /// The rows of `note` in `group`: id → body.
    func notes(_ group: String) throws -> [String: String] {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: group + "/store.sqlite", configuration: configuration).read { db in
            Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, body FROM note").map { ($0[0] as String, $0[1] as String) })
        }
    }

    /// The live records of `note` on the remote: name → fields JSON.
    func remoteNotes(_ path: String? = nil) throws -> [String: String] {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: path ?? remote, configuration: configuration).read { db in
            Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT name, fields FROM records WHERE type = 'note' AND deleted = 0").map
                {
                    ($0[0] as String, $0[1] as String)
                })
        }
    }

    // MARK: the fault suite's cloud section

    /// The bounded form of `groupstore-faults --only cloud`: 10 kill trials of
    /// A's syncing member and the 3-group convergence trials (30 s each, server-wins
    /// and field-merge).
    func testFaultSuiteCloudSection_boundedForm_holds() throws {
        let suite = try spawn("groupstore-faults", ["--ci", "--only", "cloud"], name: "groupstore-faults --ci --only cloud")
        let status = try suite.waitForExit(timeout: 900)
        print(suite.output.joined(separator: "\n"))
        XCTAssertEqual(
            status, 0,
            "cloud faults that did not hold:\n" + suite.output.filter { $0.contains("FAILED") }.joined(separator: "\n") + "\n"
                + suite.errors.filter { $0.contains("FAILED") || $0.contains("seed") }.joined(separator: "\n"))
        XCTAssertTrue(suite.output.contains { $0.hasSuffix("passed, 0 failed") }, "\(suite.output.suffix(3))")
        XCTAssertTrue(
            suite.output.contains { $0.contains("cloud: syncing member SIGKILLed") && $0.contains("| 10 | held |") }, "\(suite.output)")
    }

    // MARK: standby, signals, the group's one syncing member

    func testCloudRun_standbyTakesOver_afterSIGKILLOfTheSyncingMember_withinBound() throws {
        try createNotes(groupA)
        let first = try syncingBridge(groupA, name: "first")
        let second = try bridge(groupA, name: "second")
        try second.waitForStderr("groupstore: standing by (member 'cloud' is already live in group \(groupA) (pid \(first.pid)))")
        XCTAssertEqual(try cloudStatus(groupA)["live"] as? Bool, true)

        first.send(SIGKILL)
        let killed = Date()
        try second.waitForStderr("groupstore: syncing \(groupA)", timeout: Self.takeoverBound)
        let takeover = Date().timeIntervalSince(killed)
        print(String(format: "cloud run standby took over %.3f s after the SIGKILL (bound %.0f s)", takeover, Self.takeoverBound))
        XCTAssertLessThan(takeover, Self.takeoverBound)
        XCTAssertEqual(try first.waitForExit(), SIGKILL)

        // The new syncing member syncs: a local save is uploaded.
        let from = second.output.count
        try execIn(groupA, "INSERT INTO note(id, body) VALUES ('after-takeover', 'x')")
        try waitForEvent(second, "an upload after the takeover", after: from) { $0["event"] as? String == "uploaded" }
        XCTAssertEqual(try remoteNotes().keys.sorted(), ["after-takeover"])
        XCTAssertEqual(try cloudStatus(groupA)["live"] as? Bool, true)
    }

    func testCloudRun_SIGTERM_exits0_forTheSyncingMemberAndTheStandby() throws {
        try createNotes(groupA)
        let syncing = try syncingBridge(groupA, name: "syncing")
        let standby = try bridge(groupA, name: "standby")
        try standby.waitForStderr("groupstore: standing by")
        standby.send(SIGTERM)
        XCTAssertEqual(try standby.waitForExit(), 0, "standby: \(standby.errors)")
        syncing.send(SIGTERM)
        XCTAssertEqual(try syncing.waitForExit(), 0, "syncing member: \(syncing.errors)")
        XCTAssertEqual(try cloudStatus(groupA)["live"] as? Bool, false)
        // SIGINT too.
        let again = try syncingBridge(groupA, name: "again")
        again.send(SIGINT)
        XCTAssertEqual(try again.waitForExit(), 0, "after SIGINT: \(again.errors)")
    }

    /// Found by a full test run (the demo's two bridges, started together,
    /// met "database is locked"): opening a remote that does not exist yet
    /// switches it to WAL mode, which SQLite refuses at once while another
    /// process is switching it; 4 to 6 in 30 pairs of `cloud sync` failed.
    /// The syncs of a round start together from one shell, as the demo's do.
    func testBridgesStartedTogether_onARemoteNotCreatedYet_allSync() throws {
        let groupstore = ChildProcess.productsDirectory.appendingPathComponent("groupstore").path
        for round in 0..<20 {
            let hosts = ["A", "B"].map { root + "/together-\(round)-" + $0 }
            for host in hosts { try createNotes(host) }
            let remote = root + "/together-\(round).sqlite"
            var script = ""
            for (index, host) in hosts.enumerated() {
                let arguments = ([groupstore] + cloudArguments("sync", host, remote: remote)).map { "'\($0)'" }.joined(separator: " ")
                script += "\(arguments) > '\(host)-\(round).log' 2>&1 & p\(index)=$!\n"
            }
            for index in hosts.indices { script += "wait $p\(index); echo \"\(index) $?\"\n" }
            let shell = try spawn("/bin/sh", ["-c", script], name: "syncs of round \(round)")
            XCTAssertEqual(try shell.waitForExit(), 0)
            for (index, host) in hosts.enumerated() {
                let log = (try? String(contentsOfFile: "\(host)-\(round).log", encoding: .utf8)) ?? ""
                XCTAssertTrue(shell.output.contains("\(index) 0"), "round \(round), \(host): \(shell.output) \(log)")
            }
        }
    }

    func testCloudSync_whileCloudRunHoldsTheGroup_failsWithOneLineNamingTheGroup() throws {
        try createNotes(groupA)
        let running = try syncingBridge(groupA, name: "run")
        let sync = try spawn("groupstore", cloudArguments("sync", groupA), name: "cloud sync")
        XCTAssertEqual(try sync.waitForExit(), 1)
        XCTAssertEqual(sync.errors.count, 1, "expected one line: \(sync.errors)")
        let message = sync.errors.first ?? ""
        XCTAssertTrue(message.hasPrefix("groupstore: "), message)
        XCTAssertTrue(message.contains("another process is syncing group \(groupA)"), message)
        XCTAssertTrue(message.contains("pid \(running.pid)"), message)
        XCTAssertEqual(sync.output, [], "a refused sync printed a summary")
        XCTAssertNil(running.process.status, "the running bridge stopped")
    }

    // MARK: bad input

    func testBadInput_eachGivesOneLineErrorAndExit1_forSyncAndRun() throws {
        try createNotes(groupA)
        try execIn(groupA, "CREATE TABLE counter(id INTEGER PRIMARY KEY, n INTEGER)")
        try FileManager.default.createDirectory(atPath: root + "/adirectory", withIntermediateDirectories: false)
        let garbage = Data((0..<4096).map { _ in UInt8.random(in: 0...255) })
        XCTAssertTrue(FileManager.default.createFile(atPath: root + "/garbage.sqlite", contents: garbage))

        let cases: [(what: String, remote: String, tables: String, extra: [String], expected: [String])] = [
            ("missing remote directory", root + "/missing/cloud.sqlite", "note", [], ["no directory \(root)/missing", "cloud.sqlite"]),
            ("remote path is a directory", root + "/adirectory", "note", [], ["\(root)/adirectory is a directory"]),
            ("garbage remote file", root + "/garbage.sqlite", "note", [], ["\(root)/garbage.sqlite is not a SQLite database"]),
            ("INTEGER PRIMARY KEY table", remote, "counter", [], ["table counter", "rowid"]),
            ("missing table", remote, "note,nosuch", [], ["table nosuch does not exist"]),
            ("bad policy", remote, "note", ["--policy", "loudest-wins"], ["unknown --policy 'loudest-wins'", "server-wins"]),
            (
                "postgres server not there", "postgres://alice:s3cret@localhost:1/app", "note", [],
                ["cannot reach postgres://alice@localhost:1/app"]
            ),
        ]
        for command in ["sync", "run"] {
            for item in cases {
                let child = try spawn(
                    "groupstore", cloudArguments(command, groupA, remote: item.remote, tables: item.tables, extra: item.extra),
                    name: "cloud \(command): \(item.what)")
                XCTAssertEqual(try child.waitForExit(timeout: 30), 1, "cloud \(command), \(item.what): \(child.errors)")
                XCTAssertEqual(child.errors.count, 1, "cloud \(command), \(item.what): expected one line, got \(child.errors)")
                let message = child.errors.first ?? ""
                XCTAssertTrue(message.hasPrefix("groupstore: "), "cloud \(command), \(item.what): \(message)")
                for text in item.expected {
                    XCTAssertTrue(message.contains(text), "cloud \(command), \(item.what): '\(message)' should contain '\(text)'")
                }
                XCTAssertFalse(message.contains("s3cret"), "the password was printed: \(message)")
                XCTAssertEqual(child.output, [], "cloud \(command), \(item.what): printed \(child.output)")
            }
        }
        // Refused input is left as it was; nothing was created in its place.
        XCTAssertEqual(FileManager.default.contents(atPath: root + "/garbage.sqlite"), garbage)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/missing"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root + "/adirectory"), [])
    }

    // MARK: writers outside the library, the remote gone bad

    func testShellWriteWhileNoBridgeRuns_isUploadedByTheNextRun_andReachesBAsASaveOfCloud() throws {
        try createNotes(groupA)
        try createNotes(groupB)
        // A has synced before; now no bridge runs for it.
        let first = try syncingBridge(groupA, name: "A first")
        first.send(SIGTERM)
        XCTAssertEqual(try first.waitForExit(), 0)

        let shell = try spawn(
            "/usr/bin/sqlite3",
            [groupA + "/store.sqlite", "INSERT INTO note(id, body, n) VALUES ('from-shell', 'written by sqlite3', 7);"], name: "sqlite3")
        XCTAssertEqual(try shell.waitForExit(), 0, "sqlite3: \(shell.errors)")

        let bridgeB = try syncingBridge(groupB, name: "B")
        let viewer = try spawn("groupstore", ["watch", "--group", groupB, "--member", "viewer", "--format", "jsonl"], name: "watch B")
        try viewer.waitForStderr("groupstore: watching")
        let bridgeA = try syncingBridge(groupA, name: "A again")

        let save = try viewer.wait("a save of cloud inserting from-shell", timeout: 30) { lines, _, _ in
            lines.lazy.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.first { object in
                guard object["author"] as? String == "cloud", let changes = object["changes"] as? [[String: Any]] else { return false }
                return changes.contains { $0["entity"] as? String == "note" && ($0["inserted"] as? [String] ?? []).contains("from-shell") }
            }
        }
        XCTAssertNotNil(save["seq"] as? NSNumber)
        XCTAssertEqual(try notes(groupB), ["from-shell": "written by sqlite3"])
        XCTAssertEqual(try remoteNotes().keys.sorted(), ["from-shell"])
        // Uploaded by the new run (not by the first, which ended before the write).
        XCTAssertTrue(bridgeA.output.contains { $0.contains(#""event":"uploaded""#) }, "\(bridgeA.output)")
        XCTAssertNil(bridgeB.process.status)
    }

    func testRemoteReplacedByGarbageMidRun_isReported_theBridgeKeepsRunning_andNothingLocalIsLost() throws {
        try createNotes(groupA)
        let bridge = try syncingBridge(groupA, name: "A")
        try execIn(groupA, "INSERT INTO note(id, body) VALUES ('before', 'uploaded before the fault')")
        try waitForEvent(bridge, "the first upload") { $0["event"] as? String == "uploaded" }

        // The remote file moved aside, garbage renamed into its place.
        let aside = root + "/cloud.sqlite.aside"
        try FileManager.default.moveItem(atPath: remote, toPath: aside)
        XCTAssertTrue(
            FileManager.default.createFile(atPath: root + "/garbage.tmp", contents: Data((0..<8192).map { _ in UInt8.random(in: 0...255) }))
        )
        try FileManager.default.moveItem(atPath: root + "/garbage.tmp", toPath: remote)
        let from = bridge.output.count
        try execIn(groupA, "INSERT INTO note(id, body) VALUES ('during-1', 'written while the remote is garbage')")
        try execIn(groupA, "UPDATE note SET body = 'edited while the remote is garbage' WHERE id = 'before'")
        let failed = try waitForEvent(bridge, "a sync failing on the garbage remote, with both changes pending", after: from) {
            $0["event"] as? String == "finished" && $0["error"] is String && ($0["pending"] as? NSNumber)?.intValue == 2
        }
        let error = failed["error"] as? String ?? ""
        XCTAssertTrue(error.contains(remote), "the error should name the remote: \(error)")

        let status = try cloudStatus(groupA)
        XCTAssertEqual(status["live"] as? Bool, true)
        XCTAssertEqual((status["pending"] as? NSNumber)?.intValue, 2, "\(status)")
        let lastSync = status["lastSync"] as? [String: Any]
        XCTAssertTrue(lastSync?["error"] is String, "status should report the failed sync: \(status)")
        XCTAssertNil(bridge.process.status, "the bridge stopped on a bad remote: \(bridge.errors.suffix(5))")
        // Nothing local is lost.
        XCTAssertEqual(
            try notes(groupA), ["before": "edited while the remote is garbage", "during-1": "written while the remote is garbage"])

        // The real remote back in place: the bridge recovers and uploads what waited.
        try FileManager.default.removeItem(atPath: remote)
        try FileManager.default.moveItem(atPath: aside, toPath: remote)
        let recovered = bridge.output.count
        try execIn(groupA, "INSERT INTO note(id, body) VALUES ('after', 'written once the remote is back')")
        try waitForEvent(bridge, "a successful sync once the remote is back", after: recovered, timeout: 60) {
            $0["event"] as? String == "finished" && $0["error"] is NSNull && ($0["pending"] as? NSNumber)?.intValue == 0
        }
        let expected = try notes(groupA)
        XCTAssertEqual(expected.count, 3)
        let uploaded = try remoteNotes()
        XCTAssertEqual(uploaded.keys.sorted(), expected.keys.sorted())
        XCTAssertTrue(uploaded["before"]?.contains("edited while the remote is garbage") ?? false, "\(uploaded)")
        XCTAssertEqual((try cloudStatus(groupA)["pending"] as? NSNumber)?.intValue, 0)
    }

    // MARK: status

    func testCloudStatusJSON_hasLivePendingParkedAndLastSync() throws {
        try createNotes(groupA)
        // Never synced: all zero, no last sync.
        var status = try cloudStatus(groupA)
        XCTAssertEqual(status["live"] as? Bool, false)
        XCTAssertEqual((status["pending"] as? NSNumber)?.intValue, 0)
        XCTAssertEqual((status["parked"] as? NSNumber)?.intValue, 0)
        XCTAssertTrue(status["lastSync"] is NSNull, "\(status)")

        // A sync: the last sync's summary.
        try execIn(groupA, "INSERT INTO note(id, body) VALUES ('one', 'x'), ('two', 'y')")
        let sync = try spawn("groupstore", cloudArguments("sync", groupA, extra: ["--format", "json"]), name: "cloud sync")
        XCTAssertEqual(try sync.waitForExit(), 0, "\(sync.errors)")
        status = try cloudStatus(groupA)
        let lastSync = try XCTUnwrap(status["lastSync"] as? [String: Any], "\(status)")
        XCTAssertEqual((lastSync["uploaded"] as? NSNumber)?.intValue, 2)
        XCTAssertTrue(lastSync["error"] is NSNull)
        for key in ["fetched", "conflicts", "parked", "pending", "startedAt", "finishedAt"] {
            XCTAssertNotNil(lastSync[key] as? NSNumber, "lastSync.\(key) missing: \(lastSync)")
        }
        XCTAssertEqual(status["account"] as? String, "tester")

        // A conflict that never settles (the remote's test fault): parked, and listed.
        try execIn(groupA, "UPDATE note SET body = 'z' WHERE id = 'one'")
        let conflicted = try spawn(
            "/usr/bin/env",
            ["GROUPSTORE_REMOTE_FAULTS=conflict-always=1", ChildProcess.productsDirectory.appendingPathComponent("groupstore").path]
                + cloudArguments("sync", groupA, extra: ["--policy", "client-wins"]), name: "cloud sync, conflicts")
        XCTAssertEqual(try conflicted.waitForExit(), 0, "\(conflicted.errors)")
        status = try cloudStatus(groupA)
        XCTAssertEqual((status["parked"] as? NSNumber)?.intValue, 1, "\(status)")
        let parked = status["parkedRecords"] as? [[String: Any]] ?? []
        XCTAssertEqual(parked.first?["record"] as? String, "one", "\(status)")
        XCTAssertEqual(parked.first?["direction"] as? String, "up")

        // Live while a bridge runs (pending with a failing remote: see the garbage-remote test).
        let bridge = try syncingBridge(groupA, name: "cloud run")
        XCTAssertEqual(try cloudStatus(groupA)["live"] as? Bool, true)
        bridge.send(SIGTERM)
        XCTAssertEqual(try bridge.waitForExit(), 0)
        XCTAssertEqual(try cloudStatus(groupA)["live"] as? Bool, false)
    }
}
