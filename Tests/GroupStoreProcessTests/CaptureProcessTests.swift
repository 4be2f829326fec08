import Foundation
import GRDB
import Subprocesses
import XCTest

/// Issue #8's items as they were seen: through the CLI, the `sqlite3` shell
/// and Python, each process a real one.
final class CaptureProcessTests: ProcessTestCase {
    private func shell(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let child = try spawn("/usr/bin/sqlite3", ["-bail", "-cmd", ".timeout 10000", group + "/store.sqlite", sql], name: "sqlite3")
        XCTAssertEqual(try child.waitForExit(file: file, line: line), 0, "sqlite3: \(child.errors)", file: file, line: line)
    }

    /// Item 1: REPLACE through `groupstore exec`, seen by `groupstore watch`.
    func testInsertOrReplaceByExec_reportsTheReplacedRowAsDeleted_toAWatcher() throws {
        try exec("tool", "CREATE TABLE u(id INTEGER PRIMARY KEY, email TEXT UNIQUE); INSERT INTO u VALUES (1, 'a'), (2, 'b')")
        let watcher = try watch("dashboard")
        try exec("tool", "INSERT OR REPLACE INTO u VALUES (3, 'a')")
        try exec("tool", "INSERT OR REPLACE INTO u VALUES (2, 'z')")
        let received = try saves(watcher.waitForLines(2))
        XCTAssertEqual(received[0].inserted["u"], [3])
        XCTAssertEqual(received[0].deleted["u"], [1])
        XCTAssertEqual(received[1].updated["u"], [2], "replacing an existing key is an update")
        XCTAssertEqual(received[1].inserted["u"], [])
    }

    /// Item 2: Python's sqlite3 module creates a table and fills it at once.
    func testTableCreatedAndFilledByPython_isDeliveredFromItsFirstRow() throws {
        try exec("tool", "CREATE TABLE seen(id INTEGER PRIMARY KEY)")
        let watcher = try watch("dashboard")
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], timeout=10)
            db.execute("CREATE TABLE s(id INTEGER PRIMARY KEY)")
            db.execute("INSERT INTO s VALUES (1), (2)")
            db.commit()
            """
        let python = try spawn("/usr/bin/env", ["python3", "-c", script, group + "/store.sqlite"], name: "python3")
        XCTAssertEqual(try python.waitForExit(), 0, "\(python.errors)")
        let received = try saves(watcher.waitForLines(1))
        XCTAssertEqual(received[0].inserted["s"], [1, 2])
        XCTAssertTrue(received[0].reset.contains("s"))
    }

    /// Item 6: members stopped, the database restored from an older copy,
    /// members restarted: a resync, then delivery goes on.
    func testRestoredOlderDatabase_givesARestartedWatcherAResync_thenNewSaves() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        try shell("VACUUM INTO '\(group)/backup.sqlite'")
        let first = try watch("dashboard")
        for id in 2...5 { try exec("tool", "INSERT INTO t VALUES (\(id))") }
        try first.waitForLines(4)
        first.send(SIGTERM)
        XCTAssertEqual(try first.waitForExit(), 0)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: group + "/store.sqlite" + suffix) }
        try FileManager.default.moveItem(atPath: group + "/backup.sqlite", toPath: group + "/store.sqlite")

        let again = try watch("dashboard")
        let resync = try saves(again.waitForLines(1))[0]
        XCTAssertTrue(resync.resync, "expected a resync, got \(again.output)")
        try exec("tool", "INSERT INTO t VALUES (100)")
        let next = try saves(again.waitForLines(2))[1]
        XCTAssertEqual(next.inserted["t"], [100])
    }

    /// Item 7: a member joins while the shell holds a write transaction;
    /// `status` and `history` answer meanwhile; the member gets the shell's
    /// commit once it is made.
    func testJoiningAndInspecting_whileTheShellHoldsTheWriteLock() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let holder = try spawn("/usr/bin/sqlite3", [group + "/store.sqlite"], name: "holder")
        holder.process.writeLine("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); SELECT 'holding';")
        try holder.wait("the lock", timeout: 20) { output, _, _ in output.contains("holding") ? true : nil }

        let status = try spawn("groupstore", ["status", "--group", group, "--format", "json"])
        XCTAssertEqual(try status.waitForExit(timeout: 5), 0, "status under a held write lock: \(status.errors)")
        let history = try spawn("groupstore", ["history", "--group", group, "--format", "jsonl"])
        XCTAssertEqual(try history.waitForExit(timeout: 5), 0, "history under a held write lock: \(history.errors)")
        let watcher = try watch("late")
        holder.process.writeLine("COMMIT; SELECT 'released';")
        try holder.wait("the commit", timeout: 20) { output, _, _ in output.contains("released") ? true : nil }
        let received = try saves(watcher.waitForLines(1))
        XCTAssertEqual(received[0].inserted["t"], [1])
    }

    /// Item 7: a member that `status` shows live has fixed where it starts, so
    /// a commit made right after reaches it.
    func testNewMemberShownLive_neverMissesTheCommitMadeRightAfter() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        for round in 1...15 {
            let member = "m\(round)"
            let watcher = try spawn(
                "groupstore", ["watch", "--group", group, "--member", member, "--format", "jsonl"], name: "watch \(member)")
            // As soon as the lock says live (not when the watcher says it watches).
            let lockPath = group + "/members/\(member)/lock"
            try watcher.wait("\(member) to be live", timeout: 30) { _, _, _ in
                FileManager.default.fileExists(atPath: lockPath) && Self.isLocked(lockPath) ? true : nil
            }
            try exec("tool", "INSERT INTO t VALUES (\(round))")
            let received = try saves(watcher.waitForLines(1))
            XCTAssertEqual(received[0].inserted["t"], [Int64(round)], "\(member) missed the commit made once it was live")
            watcher.send(SIGTERM)
            _ = try watcher.waitForExit()
        }
    }

    private static func isLocked(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return true
    }
}
