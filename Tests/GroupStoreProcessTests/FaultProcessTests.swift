import Foundation
import GRDB
import GroupStore
import Subprocesses
import XCTest

/// Crashes, stalls, garbage and identity: a fault costs latency, never a change.
final class FaultProcessTests: ProcessTestCase {
    /// Requirement 2.
    func testWriterKilledMidStream_everyCommittedTransactionReachesEveryPeer_andNothingElse() throws {
        let watchers = try ["w1", "w2"].map { try watch($0) }
        let writer = try peer("writer", ["--writes", "1000000", "--log-level", "warning"])
        try watchers[0].waitForLines(301, timeout: 60)  // the table's creation, then 300 inserts
        writer.send(SIGKILL)
        XCTAssertEqual(try writer.waitForExit(), SIGKILL)

        let committed = try read { db in try Int64.fetchAll(db, sql: "SELECT id FROM items WHERE author = 'writer' ORDER BY id") }
        XCTAssertGreaterThanOrEqual(committed.count, 300)
        for watcher in watchers {
            // The first save announces the table the writer created.
            let all = try saves(watcher.waitForLines(committed.count + 1, timeout: 60))
            XCTAssertTrue(all[0].isOnlyReset, "\(watcher.name): \(all[0])")
            let received = Array(all.dropFirst())
            assertInOrderOnce(received, watcher.name)
            let keys = received.flatMap { $0.inserted["items"] ?? [] }
            XCTAssertEqual(keys, committed, "\(watcher.name): delivered keys differ from the committed rows")
        }
        // Nothing more arrives: re-check after another commit that the stream ends where the data ends.
        try exec("closer", "INSERT INTO items(author, n) VALUES ('closer', 0)")
        for watcher in watchers {
            let all = try saves(watcher.waitForLines(committed.count + 2, timeout: 30))
            XCTAssertEqual(all.count, committed.count + 2)
            XCTAssertEqual(all.last?.author, "closer")
        }
    }

    /// Requirement 3.
    func testStoppedMember_receivesAll50000Transactions_afterContinue() throws {
        let count = 50_000
        // The writer's folder exists first, so the stopped member queues its
        // payload events too: far more than the kernel's 16,384.
        try exec("writer", "SELECT 1")
        // A small queue for the sleeper, so the overflow is certain even though
        // a busy publisher skips payloads (needs root; restored at once).
        var started: ChildProcess?
        let small = try InotifyQueueLimit.lowered(to: 1024) { started = try watch("sleeper") }
        let sleeper = started!
        sleeper.send(SIGSTOP)
        let writer = try peer("writer", ["--writes", "\(count)", "--log-level", "warning"])
        XCTAssertEqual(try writer.waitForExit(timeout: 600), 0, "writer failed: \(writer.errors)")
        sleeper.send(SIGCONT)

        // The first save announces the table the writer created.
        let received = try saves(sleeper.waitForLines(count + 1, timeout: 300)).filter { !$0.isOnlyReset }
        XCTAssertEqual(received.count, count)
        assertInOrderOnce(received, "sleeper")
        let keys = received.flatMap { $0.inserted["items"] ?? [] }
        let committed = try read { db in try Int64.fetchAll(db, sql: "SELECT id FROM items ORDER BY id") }
        XCTAssertEqual(keys, committed)
        if small {
            XCTAssertTrue(sleeper.errors.contains { $0.contains("inotify queue overflowed") }, "the overflow path was not exercised")
        }
    }

    /// Requirement 4. Payload files are never opened (a name is a wake-up):
    /// garbage and forged bodies change nothing; unknown format versions and
    /// foreign names are logged by name.
    func testGarbagePayloadsAndForeignFiles_areSkipped_andTrueChangesArrive() throws {
        try exec("writer", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
        let watcher = try watch("dashboard")

        let evil = group + "/members/evil"
        try FileManager.default.createDirectory(atPath: evil, withIntermediateDirectories: false)
        func drop(_ name: String, _ bytes: [UInt8], in folder: String = evil) throws {
            // Written elsewhere and renamed in, as a publisher would.
            let temp = group + "/tmp/" + name
            _ = FileManager.default.createFile(atPath: temp, contents: Data(bytes))
            try FileManager.default.moveItem(atPath: temp, toPath: folder + "/" + name)
        }
        try drop("00000000000000000100.v2.json", (0..<4096).map { _ in UInt8.random(in: 0...255) })
        try drop("00000000000000000101.v2.json", Array(#"{"format":2,"seq":101,"author":"ev"#.utf8))
        try drop("00000000000000000102.v9.json", Array(#"{"format":9,"seq":102}"#.utf8))
        try drop(
            "00000000000000000103.v2.json",
            Array(#"{"format":2,"seq":103,"author":"evil","committedAt":1,"changes":[{"entity":"notes","inserted":[999]}]}"#.utf8))
        try drop("notes.txt", Array("hello".utf8), in: group + "/members/writer")

        try watcher.waitForStderr("unknown format version")
        try watcher.waitForStderr("not a payload")

        try exec("writer", "INSERT INTO notes(id, body) VALUES (1, 'real')")
        try exec("writer", "INSERT INTO notes(id, body) VALUES (2, 'also real')")
        let received = try saves(watcher.waitForLines(2))
        XCTAssertEqual(received.map { $0.inserted["notes"] ?? [] }, [[1], [2]])
        // Judged on the parsed saves: a search for "999" in the raw lines also matched timestamps.
        let printed = try saves(watcher.output)
        XCTAssertFalse(
            printed.contains { save in
                save.author == "evil" || [save.inserted, save.updated, save.deleted].contains { $0.values.contains { $0.contains(999) } }
            }, "a forged payload was delivered: \(watcher.output)")

        // Still alive and delivering.
        try exec("writer", "DELETE FROM notes WHERE id = 1")
        XCTAssertEqual(try saves(watcher.waitForLines(3))[2].deleted["notes"], [1])
    }

    /// Requirement 8.
    func testDeadMemberPinsHistoryOnlyForTheRetention_andALaggingMemberIsToldToResync() throws {
        try exec("writer", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
        let sleeper = try watch("sleeper")
        sleeper.send(SIGTERM)
        XCTAssertEqual(try sleeper.waitForExit(), 0)
        // Creating the table is one transaction (before the sleeper joined);
        // each insert is one more.
        let written: Int64 = 5
        let seqs = try (1...written).map { n in Int64(try execSeq("writer", "INSERT INTO notes(id) VALUES (\(n))")) }
        let payloads = {
            try FileManager.default.contentsOfDirectory(atPath: self.group + "/members/writer").filter { $0.hasSuffix(".json") }
        }
        XCTAssertEqual(try payloads().count, Int(written) + 1)

        var configuration = GroupConfiguration(directory: group, member: try MemberName("janitor"))
        configuration.retention = 3600
        configuration.pruneInterval = nil
        let janitor = try GroupStore(configuration)
        defer { janitor.closeBlocking() }

        // The dead sleeper has consumed nothing since it left (its cursor is
        // the table's creation; the writer only writes and pins
        // nothing): within the retention it pins the rest of the history.
        let early = try janitor.prune()
        XCTAssertEqual(early.transactionsRemoved, 1)
        XCTAssertEqual(early.heldBackBy.map(\.member), ["sleeper"])
        XCTAssertEqual(try read { try Int64.fetchOne($0, sql: "SELECT count(*) FROM groupstore_transaction") }, written)

        // Past the retention it does not.
        let late = try janitor.prune(now: Date().addingTimeInterval(3600 + 60))
        XCTAssertEqual(late.prunedThrough, seqs.last)
        // The newest transaction and change rows stay as the high-water marks of their ids.
        XCTAssertEqual(late.transactionsRemoved, Int(written) - 1)
        XCTAssertEqual(try payloads().count, 0, "payload files outlived the retention")
        XCTAssertEqual(try read { try Int.fetchOne($0, sql: "SELECT count(*) FROM groupstore_change") }, 1)

        // The sleeper comes back behind the horizon: it is told to resync, then sees new saves normally.
        let back = try watch("sleeper")
        let first = try saves(back.waitForLines(1))[0]
        XCTAssertTrue(first.resync, "expected a resync save, got \(back.output)")
        XCTAssertEqual(first.seq, seqs.last)
        let hundred = try execSeq("writer", "INSERT INTO notes(id) VALUES (100)")
        let next = try saves(back.waitForLines(2))[1]
        XCTAssertEqual(next.seq, Int64(hundred))
        XCTAssertEqual(next.inserted["notes"], [100])
    }

    /// Requirement 9.
    func testSecondProcessClaimingALiveMemberName_failsWithAClearError() throws {
        let live = try watch("collector")
        let second = try spawn("groupstore", ["exec", "--group", group, "--member", "collector", "--sql", "SELECT 1"])
        XCTAssertEqual(try second.waitForExit(), 1)
        XCTAssertEqual(second.errors.count, 1, "expected one line: \(second.errors)")
        XCTAssertTrue(
            second.errors[0].hasPrefix("groupstore: member 'collector' is already live in group \(group) (pid \(live.pid))"),
            second.errors[0])
        // Once the live one is gone, the name is free again.
        live.send(SIGTERM)
        XCTAssertEqual(try live.waitForExit(), 0)
        try exec("collector", "SELECT 1")
    }

    /// Requirement 9.
    func testBadMemberNames_areRejectedWithAClearError() throws {
        let cases = [
            ("../x", "contains '/'"), ("", "it is empty"), (String(repeating: "m", count: 200), "200 bytes long"),
            ("..", "starts with '.'"), ("tab\there", "control character"),
        ]
        for (name, reason) in cases {
            let child = try spawn("groupstore", ["exec", "--group", group, "--member", name, "--sql", "SELECT 1"])
            XCTAssertEqual(try child.waitForExit(), 1, "name \(name.debugDescription) was accepted")
            XCTAssertEqual(child.errors.count, 1)
            XCTAssertTrue(child.errors.first?.contains("invalid member name") ?? false, "\(child.errors)")
            XCTAssertTrue(child.errors.first?.contains(reason) ?? false, "\(child.errors) should say \(reason)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: group + "/x"), "a file escaped the members folder")
    }
}
