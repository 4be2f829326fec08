import Foundation
import GRDB
import XCTest

/// The `groupstore` command-line contract, run as child processes.
final class CLIProcessTests: ProcessTestCase {
    func testExecInOneProcess_appearsInWatchJsonlOfTwoOthers_withEveryField() throws {
        try exec("tool", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'a'), (2, 'b')")
        let watchers = try ["left", "right"].map { try watch($0) }
        let before = Date().timeIntervalSince1970
        let first = try XCTUnwrap(
            try read { try Int.fetchOne($0, sql: "SELECT seq FROM groupstore_transaction ORDER BY seq DESC LIMIT 1") })
        let seq = try execSeq(
            "tool", "INSERT INTO notes VALUES (3, 'c'); UPDATE notes SET body = 'A' WHERE id = 1; DELETE FROM notes WHERE id = 2")
        XCTAssertGreaterThan(seq, first)
        for watcher in watchers {
            let line = try watcher.waitForLines(1)[0]
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertEqual(object["seq"] as? Int, seq)
            XCTAssertEqual(object["author"] as? String, "tool")
            let committedAt = try XCTUnwrap(object["committedAt"] as? Double)
            let receivedAt = try XCTUnwrap(object["receivedAt"] as? Double)
            XCTAssertGreaterThanOrEqual(committedAt, before - 1)
            XCTAssertGreaterThanOrEqual(receivedAt, committedAt)
            let changes = try XCTUnwrap(object["changes"] as? [[String: Any]])
            XCTAssertEqual(changes.count, 1)
            XCTAssertEqual(changes[0]["entity"] as? String, "notes")
            XCTAssertEqual(changes[0]["inserted"] as? [Int], [3])
            XCTAssertEqual(changes[0]["updated"] as? [Int], [1])
            XCTAssertEqual(changes[0]["deleted"] as? [Int], [2])
        }
    }

    func testStatusJson_listsLiveAndDeadMembersWithCursors() throws {
        let created = try execSeq("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let gone = try watch("gone")
        gone.send(SIGTERM)
        XCTAssertEqual(try gone.waitForExit(), 0)
        let live = try watch("live")
        try exec("tool", "INSERT INTO t VALUES (1)")
        let last = try execSeq("tool", "INSERT INTO t VALUES (2)")
        try live.waitForLines(2)

        let status = try spawn("groupstore", ["status", "--group", group, "--format", "json"])
        XCTAssertEqual(try status.waitForExit(), 0, "\(status.errors)")
        XCTAssertEqual(status.output.count, 1, "one JSON object expected")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.output[0].utf8)) as? [String: Any])
        XCTAssertEqual(object["head"] as? Int, last, "the second insert is the newest transaction")
        XCTAssertEqual(object["historyTransactions"] as? Int, 3, "the table's creation, then two inserts")
        let members = try XCTUnwrap(object["members"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: members.map { ($0["name"] as! String, $0) })
        XCTAssertEqual(Set(byName.keys), ["gone", "live", "tool"])
        XCTAssertEqual(byName["live"]?["live"] as? Bool, true)
        XCTAssertEqual(byName["gone"]?["live"] as? Bool, false)
        XCTAssertEqual(byName["tool"]?["live"] as? Bool, false)
        XCTAssertEqual(byName["gone"]?["cursor"] as? Int, created, "the dead member's cursor is where it left")
        XCTAssertEqual(byName["gone"]?["behind"] as? Int, 2, "the dead member is two transactions behind")
        XCTAssertNotNil(byName["live"]?["cursor"] as? Int)
    }

    func testHistory_printsTheTransactionsAfterSince_inTheWatchShapeWithoutReceivedAt() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let seqs = try (1...3).map { id in try execSeq("tool", "INSERT INTO t VALUES (\(id))") }
        let history = try spawn("groupstore", ["history", "--group", group, "--since", "\(seqs[0])", "--format", "jsonl"])
        XCTAssertEqual(try history.waitForExit(), 0, "\(history.errors)")
        let printed = try saves(history.output)
        XCTAssertEqual(printed.map(\.seq), seqs.dropFirst().map(Int64.init))
        XCTAssertEqual(printed.map { $0.inserted["t"] ?? [] }, [[2], [3]])
        XCTAssertTrue(printed.allSatisfy { $0.receivedAt == nil })
    }

    func testGC_withZeroRetention_removesHistoryAndPayloads_andSaysSo() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let seqs = try (1...3).map { id in try execSeq("tool", "INSERT INTO t VALUES (\(id))") }
        let gc = try spawn("groupstore", ["gc", "--group", group, "--retention", "0", "--format", "json"])
        XCTAssertEqual(try gc.waitForExit(), 0, "\(gc.errors)")
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(gc.output.joined().utf8)) as? [String: Any])
        // The table's creation, then the inserts.
        XCTAssertEqual(report["prunedThrough"] as? Int, seqs.last)
        XCTAssertEqual(report["transactionsRemoved"] as? Int, 3, "the newest row stays as the high-water mark")
        XCTAssertEqual(report["payloadFilesRemoved"] as? Int, 4)
        let payloads = try FileManager.default.contentsOfDirectory(atPath: group + "/members/tool").filter { $0.hasSuffix(".json") }
        XCTAssertEqual(payloads, [])
    }

    /// `exec` says "no tracked changes" whenever no member will be given the
    /// transaction, so a script never waits for a sequence number that no
    /// member will ever receive.
    func testExec_saysNoTrackedChanges_forAnInsertThatDidNothing_andForARowInsertedAndDeletedAgain() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try exec("tool", "INSERT INTO t VALUES (1, 'a')")
        let watcher = try watch("watcher")
        XCTAssertEqual(try exec("tool", "INSERT INTO t VALUES (1, 'b') ON CONFLICT DO NOTHING"), "no tracked changes")
        XCTAssertEqual(try exec("tool", "INSERT INTO t VALUES (2, 'c'); DELETE FROM t WHERE id = 2"), "no tracked changes")
        XCTAssertEqual(try exec("tool", "UPDATE t SET v = v WHERE id = 99"), "no tracked changes")
        // What does change arrives, and it is the watcher's first save.
        let seq = try execSeq("tool", "INSERT INTO t VALUES (3, 'd')")
        let first = try saves(watcher.waitForLines(1))
        XCTAssertEqual(first.map(\.seq), [Int64(seq)])
        XCTAssertEqual(first.first?.inserted["t"], [3])
    }

    func testErrors_exitNonZeroWithOneLineOnStderr() throws {
        let missing = group + "/nowhere"
        let cases: [([String], String)] = [
            (["status", "--group", missing], "does not exist"),
            (["history", "--group", missing], "does not exist"),
            (["gc", "--group", missing], "does not exist"),
            (["watch", "--group", group, "--member", "a/b"], "invalid member name"),
            (["exec", "--group", group, "--member", "tool", "--sql", "SELEC 1"], "syntax error"),
            (["exec", "--group", group, "--member", "tool", "--sql", "INSERT INTO nosuchtable VALUES (1)"], "no such table"),
        ]
        for (arguments, message) in cases {
            let child = try spawn("groupstore", arguments)
            XCTAssertEqual(try child.waitForExit(), 1, "\(arguments) should fail")
            XCTAssertEqual(child.errors.count, 1, "\(arguments): expected one line, got \(child.errors)")
            XCTAssertTrue(child.errors.first?.hasPrefix("groupstore: ") ?? false, "\(child.errors)")
            XCTAssertTrue(child.errors.first?.contains(message) ?? false, "\(arguments): \(child.errors) should say \(message)")
        }
    }

    func testHelpOfEachSubcommand_showsAnExample() throws {
        for subcommand in ["exec", "watch", "status", "history", "gc"] {
            let help = try spawn("groupstore", [subcommand, "--help"])
            XCTAssertEqual(try help.waitForExit(), 0)
            let text = help.output.joined(separator: "\n")
            XCTAssertTrue(text.contains("Example:"), "\(subcommand) --help has no example")
            XCTAssertTrue(text.contains("groupstore \(subcommand) --group"), "\(subcommand) --help example: \(text)")
        }
    }
}
