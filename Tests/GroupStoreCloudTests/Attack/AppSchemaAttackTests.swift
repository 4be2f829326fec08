import Foundation
import Subprocesses
import XCTest

/// The attack on the bridge (issue 30), the findings in the app's schema
/// and host rather than in the remote: app triggers, skewed clocks, foreign
/// keys and schema drift between groups; on the embedded remote (and on
/// PostgreSQL in ``PostgresAppSchemaAttackTests``).
class AppSchemaAttackTests: AttackTestCase {
    static let schema = BridgeAttackTests.schema
    static let revisedSchema = "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT, rev INTEGER NOT NULL DEFAULT 0)"

    /// The idle sync each bridge makes once nothing is left (bounded by its 5-second timer).
    private func waitIdle(_ bridges: [(String, Subprocess)]) throws {
        for (name, child) in bridges {
            let from = child.output.count
            try event(child, "an idle sync of \(name)", after: from, timeout: 30) {
                $0["event"] as? String == "finished" && ($0["uploaded"] as? NSNumber)?.intValue == 0
                    && ($0["fetched"] as? NSNumber)?.intValue == 0 && $0["error"] is NSNull
            }
        }
    }

    // MARK: 6. an app trigger on an updated column

    func testAnAppTriggerOnOneColumn_doesNotMakeTwoRunningBridgesUploadForEver() throws {
        let schema =
            Self.revisedSchema
            + "; CREATE TRIGGER bump AFTER UPDATE OF title ON note BEGIN UPDATE note SET rev = rev + 1 WHERE id = NEW.id; END"
        for name in ["a", "b"] { try exec(name, schema) }
        try exec("a", "INSERT INTO note(id, title) VALUES ('n1', 't0')")
        try cloudSync("a")
        try cloudSync("b")
        let bridges = [("a", try cloudRun("a")), ("b", try cloudRun("b"))]
        try exec("a", "UPDATE note SET title = 't1' WHERE id = 'n1'")
        try eventually("t1 in b") { try rows("b", "SELECT title FROM note") == ["t1"] }
        try waitIdle(bridges)
        let a = try rows("a", "SELECT title || ':' || rev FROM note")
        XCTAssertEqual(a, try rows("b", "SELECT title || ':' || rev FROM note"))
        // a's update bumps rev once in a; applying it in b changes title there, which bumps it once more.
        XCTAssertEqual(a, ["t1:2"])
    }

    func testADerivedChangeLoopBetweenTwoBridges_isStoppedAndParkedWithAReason() throws {
        // Any update of a row bumps rev: each apply of the other group's bump bumps it again.
        let schema =
            Self.revisedSchema + "; CREATE TRIGGER bump AFTER UPDATE ON note BEGIN UPDATE note SET rev = rev + 1 WHERE id = NEW.id; END"
        for name in ["a", "b"] { try exec(name, schema) }
        try exec("a", "INSERT INTO note(id, title) VALUES ('n1', 't0')")
        try cloudSync("a")
        try cloudSync("b")
        let bridges = [("a", try cloudRun("a")), ("b", try cloudRun("b"))]
        try exec("a", "UPDATE note SET title = 't1' WHERE id = 'n1'")
        try eventually("the loop parked in a group, with its reason") {
            try ["a", "b"].contains { name in
                let parked = try cloudStatus(name)["parkedRecords"] as? [[String: Any]] ?? []
                return parked.contains { ($0["reason"] as? String)?.contains("loop") == true }
            }
        }
        try waitIdle(bridges)
        let revs = try rows("a", "SELECT rev FROM note") + rows("b", "SELECT rev FROM note")
        XCTAssertTrue(revs.allSatisfy { (Int($0) ?? .max) < 100 }, "the loop ran on: \(revs)")
    }

    // MARK: 7. newer-wins and a skewed clock

    func testNewerWins_aHostWhoseClockIsAnHourAhead_doesNotWinWithItsOlderEdit() throws {
        try newerWins(skewOfB: 3600, bEditsFirst: true, expected: "edited in a, later")
    }

    func testNewerWins_aHostWhoseClockIsAnHourBehind_winsWithItsNewerEdit() throws {
        try newerWins(skewOfB: -3600, bEditsFirst: false, expected: "edited in b, later")
    }

    /// b's clock skewed by `skewOfB` seconds (the engine's injectable clock:
    /// `GROUPSTORE_CLOCK_SKEW`, as `faketime` would); b and a edit the same
    /// field in real order; a syncs first, then b settles the conflict.
    private func newerWins(skewOfB skew: Int, bEditsFirst: Bool, expected: String, file: StaticString = #filePath, line: UInt = #line)
        throws
    {
        let policy = ["--policy", "newer-wins"]
        let skewed = ["GROUPSTORE_CLOCK_SKEW": "\(skew)"]
        for name in ["a", "b"] { try exec(name, Self.schema) }
        try exec("a", "INSERT INTO note VALUES ('n1', 'first')")
        try cloudSync("a", extra: policy)
        try cloudSync("b", extra: policy, environment: skewed)
        let edits = [
            ("b", "edited in b, " + (bEditsFirst ? "earlier" : "later")), ("a", "edited in a, " + (bEditsFirst ? "later" : "earlier")),
        ]
        for (name, body) in bEditsFirst ? edits : edits.reversed() {
            try exec(name, "UPDATE note SET body = '\(body)' WHERE id = 'n1'")
            usleep(20_000)  // two edits 20 ms apart in real time: the order newer-wins must find
        }
        try cloudSync("a", extra: policy)
        try cloudSync("b", extra: policy, environment: skewed)
        try cloudSync("a", extra: policy)
        XCTAssertEqual(try rows("a", "SELECT body FROM note"), [expected], file: file, line: line)
        XCTAssertEqual(try rows("b", "SELECT body FROM note"), [expected], file: file, line: line)
    }

    // MARK: 9. a foreign key without ON DELETE

    func testAParentDeletedWhileAChildIsAdded_withoutOnDelete_convergesWithTheChildKeepingItsParent() throws {
        let schema =
            "CREATE TABLE parent(id TEXT PRIMARY KEY, name TEXT); CREATE TABLE child(id TEXT PRIMARY KEY, parent_id TEXT REFERENCES parent(id), v TEXT)"
        let tables = "parent,child"
        for name in ["a", "b"] { try exec(name, schema) }
        try exec("a", "INSERT INTO parent VALUES ('p1', 'the parent')")
        try cloudSync("a", tables: tables)
        try cloudSync("b", tables: tables)
        try exec("a", "DELETE FROM parent WHERE id = 'p1'")
        try exec("b", "INSERT INTO child VALUES ('c1', 'p1', 'added in b')")
        for name in ["a", "b", "a", "b"] { try cloudSync(name, tables: tables) }
        for name in ["a", "b"] {
            XCTAssertEqual(try rows(name, "SELECT id FROM parent UNION ALL SELECT id FROM child"), ["p1", "c1"], "group \(name)")
            let status = try cloudStatus(name)
            XCTAssertEqual((status["parked"] as? NSNumber)?.intValue, 0, "group \(name): \(status)")
        }
    }

    // MARK: 11. a renamed column

    func testAColumnRenamedInOneGroup_isCarriedAndReported_andTheLocalErrorNamesTheTable() throws {
        for name in ["a", "b"] { try exec(name, Self.schema) }
        try exec("a", "INSERT INTO note VALUES ('n1', 'one')")
        try cloudSync("a")
        try cloudSync("b")
        let bridge = try cloudRun("a")
        let from = bridge.output.count
        try exec("a", "ALTER TABLE note RENAME COLUMN body TO content; UPDATE note SET content = 'renamed in a' WHERE id = 'n1'")
        // The running bridge maps the table again and uploads the edit (a sync that started before it
        // noticed may fail, but as a local error naming the table, not as the remote's).
        try event(bridge, "the edit after the rename uploaded", after: from) {
            $0["event"] as? String == "finished" && (($0["uploaded"] as? NSNumber)?.intValue ?? 0) > 0 && $0["error"] is NSNull
        }
        let failures = bridge.output.dropFirst(from).compactMap { line -> String? in
            let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return event?["error"] as? String
        }
        for failure in failures {
            XCTAssertTrue(failure.contains("local table note"), "a local schema change reported as a failure of the remote: \(failure)")
            XCTAssertFalse(failure.contains(remote()), "a local schema change blamed on the remote: \(failure)")
        }
        bridge.send(SIGTERM)
        XCTAssertEqual(bridge.waitForExit(timeout: 30), 0, "cloud run of a on SIGTERM: \(bridge.errors.suffix(4))")

        // b lacks the column a renamed to: its value stays on the remote, and b says so, naming table and column.
        try cloudSync("b")
        let driftInB = try cloudStatus("b")["schemaDrift"] as? [[String: Any]] ?? []
        XCTAssertTrue(driftInB.contains { $0["table"] as? String == "note" && $0["column"] as? String == "content" }, "\(driftInB)")
        // An edit of the old column in b goes up beside it; a, which lacks that column now, says so in turn.
        try exec("b", "UPDATE note SET body = 'edited in b' WHERE id = 'n1'")
        try cloudSync("b")
        try cloudSync("a")
        let driftInA = try cloudStatus("a")["schemaDrift"] as? [[String: Any]] ?? []
        XCTAssertTrue(driftInA.contains { $0["table"] as? String == "note" && $0["column"] as? String == "body" }, "\(driftInA)")
        // Nothing is lost: each group keeps its edit, the remote holds both columns' values.
        XCTAssertEqual(try rows("a", "SELECT content FROM note"), ["renamed in a"])
        XCTAssertEqual(try rows("b", "SELECT body FROM note"), ["edited in b"])
        XCTAssertEqual(try remoteFields("note", "n1"), ["body": "edited in b", "content": "renamed in a"])
        for name in ["a", "b"] {
            XCTAssertEqual((try cloudStatus(name)["pending"] as? NSNumber)?.intValue, 0, "group \(name) uploads nothing more")
        }
    }
}
