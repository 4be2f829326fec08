import Foundation
import Subprocesses
import XCTest

/// The attack on the bridge (issue 30), each finding reproduced through the
/// `groupstore` command as its report did, on the embedded remote (and on
/// PostgreSQL in ``PostgresBridgeAttackTests``): a remote replaced or
/// restored under the groups; keys, tables and columns SQLite accepts that
/// the bridge mishandled; app triggers, skewed clocks and foreign keys.
class BridgeAttackTests: AttackTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"

    // MARK: 1. a remote replaced by a fresh one

    func testARemoteReplacedUnderARunningBridge_isNoticed_andEveryRecordReachesTheNewOne() throws {
        for name in ["a", "b"] { try exec(name, Self.schema) }
        try exec("a", "INSERT INTO note VALUES ('n1', 'one'), ('n2', 'two')")
        let bridge = try cloudRun("a")
        try eventually("A's rows on the remote") { try remoteNames("note") == ["n1", "n2"] }

        try replaceRemote()
        let from = bridge.output.count
        try exec("a", "INSERT INTO note VALUES ('n3', 'three')")
        try eventually("every row of A on the new remote") { try remoteNames("note") == ["n1", "n2", "n3"] }
        try event(bridge, "a sync with nothing pending", after: from) {
            $0["event"] as? String == "finished" && $0["error"] is NSNull && ($0["pending"] as? NSNumber)?.intValue == 0
        }
        let status = try cloudStatus("a")
        XCTAssertEqual((status["parked"] as? NSNumber)?.intValue, 0, "nothing parked because the remote is new: \(status)")
        XCTAssertTrue(bridge.output.contains { $0.contains(#""event":"remoteReset""#) && $0.contains("replaced") }, "\(bridge.output)")
        let reset = status["remoteReset"] as? [String: Any]
        XCTAssertEqual(reset?["kind"] as? String, "replaced", "cloud status says the remote was replaced: \(status)")

        try cloudSync("b")
        XCTAssertEqual(try rows("b", "SELECT id || ':' || body FROM note ORDER BY id"), ["n1:one", "n2:two", "n3:three"])
    }

    func testARemoteReplacedWhileNoBridgeRan_getsEveryRecordAtTheNextSync() throws {
        try exec("a", Self.schema)
        try exec("a", "INSERT INTO note VALUES ('n1', 'one'), ('n2', 'two')")
        try cloudSync("a")
        try replaceRemote()
        try exec("a", "UPDATE note SET body = 'ONE' WHERE id = 'n1'")
        try cloudSync("a")
        XCTAssertEqual(try remoteNames("note"), ["n1", "n2"], "every record, not only the new edit")
        XCTAssertEqual((try cloudStatus("a")["parked"] as? NSNumber)?.intValue, 0)
    }

    /// a and b in sync (n1, n2 = v1); a updates n1, deletes n2 and adds n3,
    /// and syncs; b does not; then the remote is replaced. Whichever group
    /// finds it first, the older versions b brings back (n1 = v1, and n2)
    /// roll back nothing a acknowledged.
    private func replaceWhileBIsBehind(syncing order: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        for name in ["a", "b"] { try exec(name, Self.schema) }
        try exec("a", "INSERT INTO note VALUES ('n1', 'v1'), ('n2', 'v1')")
        try cloudSync("a")
        try cloudSync("b")
        try exec("a", "UPDATE note SET body = 'v2' WHERE id = 'n1'; DELETE FROM note WHERE id = 'n2'; INSERT INTO note VALUES ('n3', 'v1')")
        try cloudSync("a")
        try replaceRemote()
        for name in order { try cloudSync(name) }
        let expected = ["n1:v2", "n3:v1"]
        XCTAssertEqual(try rows("a", "SELECT id || ':' || body FROM note ORDER BY id"), expected, "a", file: file, line: line)
        XCTAssertEqual(try rows("b", "SELECT id || ':' || body FROM note ORDER BY id"), expected, "b", file: file, line: line)
        XCTAssertEqual(try remoteNames("note"), ["n1", "n3"], "the remote's live records", file: file, line: line)
        for name in ["a", "b"] {
            XCTAssertEqual((try cloudStatus(name)["pending"] as? NSNumber)?.intValue, 0, "\(name) pending", file: file, line: line)
        }
    }

    func testARemoteReplaced_foundFirstByTheGroupAhead_isNotRolledBackByTheGroupBehind() throws {
        try replaceWhileBIsBehind(syncing: ["a", "b", "a", "b"])
    }

    func testARemoteReplaced_foundFirstByTheGroupBehind_isNotRolledBack() throws {
        try replaceWhileBIsBehind(syncing: ["b", "a", "b"])
    }

    // MARK: 2. a remote restored from an older copy

    func testARemoteRestoredFromAnOlderCopy_bringsTheGroupsToOneState_rollingBackNothingAcknowledged() throws {
        for name in ["a", "b"] { try exec(name, Self.schema) }
        try exec("a", "INSERT INTO note VALUES ('n1', 'v1'), ('n2', 'v1')")
        try cloudSync("a")
        try cloudSync("b")
        try backUpRemote()
        try exec("a", "UPDATE note SET body = 'v2' WHERE id = 'n1'; DELETE FROM note WHERE id = 'n2'; INSERT INTO note VALUES ('n3', 'v1')")
        try cloudSync("a")
        try cloudSync("b")
        try restoreRemote()
        for name in ["a", "b", "a", "b"] { try cloudSync(name) }
        let expected = ["n1:v2", "n3:v1"]
        XCTAssertEqual(try rows("a", "SELECT id || ':' || body FROM note ORDER BY id"), expected)
        XCTAssertEqual(try rows("b", "SELECT id || ':' || body FROM note ORDER BY id"), expected)
        XCTAssertEqual(try remoteNames("note"), ["n1", "n3"])
        let reset = try cloudStatus("a")["remoteReset"] as? [String: Any]
        XCTAssertEqual(reset?["kind"] as? String, "restored", "cloud status says the remote went back")
    }

    // MARK: 3, 8, 10. keys

    func testTextKeysWithANulByteOrBytesThatAreNotUTF8_sync() throws {
        for name in ["a", "b"] { try exec(name, Self.schema) }
        try exec("a", "INSERT INTO note VALUES ('nul' || char(0) || 'key', 'v1'), (CAST(X'FF41' AS TEXT), 'v2')")
        try cloudSync("a")
        try cloudSync("b")
        XCTAssertEqual(
            try rows("b", "SELECT hex(id) || '|' || typeof(id) || '|' || body FROM note ORDER BY 1"),
            ["6E756C006B6579|text|v1", "FF41|text|v2"])
        XCTAssertEqual((try cloudStatus("a")["pending"] as? NSNumber)?.intValue, 0)
    }

    func testTextKeysSpelledLikeABlobsRecordName_stayText() throws {
        for name in ["a", "b"] { try exec(name, Self.schema) }
        try exec("a", "INSERT INTO note VALUES ('hex:41', 'v1'), ('hex:', 'v2'), (X'41', 'a blob key')")
        try cloudSync("a")
        try cloudSync("b")
        XCTAssertEqual(
            try rows("b", "SELECT hex(id) || '|' || typeof(id) || '|' || body FROM note ORDER BY 1"),
            ["41|blob|a blob key", "6865783A3431|text|v1", "6865783A|text|v2"])
    }

    func testAKeyUnderCollateNocase_isRefusedWithASentence() throws {
        try exec("a", "CREATE TABLE tag(id TEXT PRIMARY KEY COLLATE NOCASE, color TEXT)")
        let run = try groupstore(cloud("sync", "a", tables: "tag"))
        XCTAssertEqual(run.status, 1, "a NOCASE key was synced: \(run.text)")
        XCTAssertTrue(run.errors.first?.contains("table tag") == true && run.errors.first?.contains("NOCASE") == true, run.text)
    }

    // MARK: 5. a table spelled in another case

    func testTheSameTableSpelledMemoAndmemo_isOneRecordType() throws {
        try exec("a", "CREATE TABLE Memo(id TEXT PRIMARY KEY, body TEXT); INSERT INTO Memo VALUES ('m1', 'from a')")
        try exec("b", "CREATE TABLE memo(id TEXT PRIMARY KEY, body TEXT); INSERT INTO memo VALUES ('m2', 'from b')")
        try cloudSync("a", tables: "Memo")
        try cloudSync("b", tables: "memo")
        try cloudSync("a", tables: "Memo")
        try exec("a", "UPDATE Memo SET body = 'edited in a' WHERE id = 'm2'")
        try exec("b", "UPDATE memo SET body = 'edited in b' WHERE id = 'm1'")
        for (name, table) in [("a", "Memo"), ("b", "memo"), ("a", "Memo")] { try cloudSync(name, tables: table) }
        let expected = ["m1:edited in b", "m2:edited in a"]
        XCTAssertEqual(try rows("a", "SELECT id || ':' || body FROM Memo ORDER BY id"), expected)
        XCTAssertEqual(try rows("b", "SELECT id || ':' || body FROM memo ORDER BY id"), expected)
        let types = try remoteTypes()
        XCTAssertEqual(types.filter { $0.lowercased() == "memo" }.count, 1, "\(types)")
    }

    // MARK: 4. a table added to --tables later

    func testATableAddedToTablesLater_downloadsWhatOtherGroupsUploadedBefore() throws {
        let schema = Self.schema + "; CREATE TABLE tag(id TEXT PRIMARY KEY, color TEXT)"
        for name in ["a", "b"] { try exec(name, schema) }
        try exec("a", "INSERT INTO note VALUES ('n1', 'one'); INSERT INTO tag VALUES ('t1', 'red')")
        try cloudSync("a", tables: "note,tag")
        try cloudSync("b", tables: "note")
        try cloudSync("b", tables: "note,tag")
        XCTAssertEqual(try rows("b", "SELECT id || ':' || color FROM tag"), ["t1:red"])
    }
}
