import Foundation
import GRDB
import Subprocesses
import XCTest

/// The daemon pattern of the README, run as real processes: the store and an
/// app service in one `ServiceGroup`, in either order, the app awaiting
/// before it subscribes; stopped with SIGTERM and started again while a peer
/// writes.
final class LifecycleProcessTests: ProcessTestCase {
    private func daemon(_ order: String) throws -> ChildProcess {
        let child = try spawn(
            "groupstore-peer", ["--group", group, "--member", "daemon", "--service-order", order, "--log-level", "warning"],
            name: "daemon \(order)")
        try child.waitForStderr("peer: daemon ready")
        return child
    }

    private func stop(_ child: ChildProcess, file: StaticString = #filePath, line: UInt = #line) throws -> TimeInterval {
        let started = Date()
        child.send(SIGTERM)
        let status = try child.waitForExit(timeout: 10, file: file, line: line)
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(status, 0, "\(child.name) exited \(status) on SIGTERM: \(child.errors.suffix(5))", file: file, line: line)
        XCTAssertLessThan(took, 1.0, "\(child.name) took \(took) s to stop on SIGTERM", file: file, line: line)
        return took
    }

    private func checkRestartCycle(order: String) throws {
        try exec("writer", "CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, author TEXT NOT NULL, n INTEGER NOT NULL)")
        let first = try daemon(order)
        for n in 1...3 { try exec("writer", "INSERT INTO items(author, n) VALUES ('writer', \(n))") }
        let before = try saves(first.waitForLines(3))
        _ = try stop(first)

        // Down while the peer writes; then up again, awaiting before it subscribes.
        for n in 4...8 { try exec("writer", "INSERT INTO items(author, n) VALUES ('writer', \(n))") }
        let second = try daemon(order)
        let after = try saves(second.waitForLines(5))
        try exec("writer", "INSERT INTO items(author, n) VALUES ('writer', 9)")
        let live = try saves(second.waitForLines(6))
        _ = try stop(second)

        let all = before + live
        let keys = all.flatMap { $0.inserted["items"] ?? [] }
        let committed = try read { db in try Int64.fetchAll(db, sql: "SELECT id FROM items ORDER BY id") }
        XCTAssertEqual(keys, committed, "\(order): every save once, in order, across the restart")
        XCTAssertEqual(after.count, 5)
        assertInOrderOnce(all, order)
    }

    func testDaemonWithTheStoreFirst_getsEverySaveOnceAcrossARestart_andStopsOnSIGTERM() throws {
        try checkRestartCycle(order: "store-first")
    }

    func testDaemonWithTheAppFirst_getsEverySaveOnceAcrossARestart_andStopsOnSIGTERM() throws {
        try checkRestartCycle(order: "app-first")
    }

    /// A daemon whose app writes every millisecond until its own service is
    /// shut down: SIGTERM stops the store before or after the app, and either
    /// way the daemon exits 0 and every row it committed reaches a peer.
    private func checkWritingDaemonStops(order: String) throws {
        try exec("writer", "CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, author TEXT NOT NULL, n INTEGER NOT NULL)")
        let peer = try watch("peer")
        let daemon = try spawn(
            "groupstore-peer",
            ["--group", group, "--member", "daemon", "--service-order", order, "--daemon-writes", "--log-level", "warning"],
            name: "writing daemon \(order)")
        try daemon.waitForStderr("peer: daemon committed 20")
        daemon.send(SIGTERM)
        let status = try daemon.waitForExit(timeout: 10)
        XCTAssertEqual(status, 0, "\(order): the writing daemon exited \(status) on SIGTERM: \(daemon.errors.suffix(5))")
        let committed = daemon.errors.compactMap { line -> Int64? in
            guard let range = line.range(of: "peer: daemon committed ") else { return nil }
            return Int64(line[range.upperBound...].trimmingCharacters(in: .whitespaces))
        }
        let inDatabase = try read { db in try Int64.fetchAll(db, sql: "SELECT id FROM items WHERE author = 'daemon' ORDER BY id") }
        XCTAssertEqual(committed, inDatabase, "\(order): what the daemon reported committed is what the database holds")
        let received = try saves(peer.waitForLines(inDatabase.count, timeout: 30)).flatMap { $0.inserted["items"] ?? [] }
        XCTAssertEqual(received, inDatabase, "\(order): the peer got every row the daemon committed, once")
    }

    func testAWritingDaemonWithTheStoreLast_exitsCleanlyOnSIGTERM_andEveryCommittedRowReachesAPeer() throws {
        try checkWritingDaemonStops(order: "app-first")
    }

    func testAWritingDaemonWithTheStoreFirst_exitsCleanlyOnSIGTERM_andEveryCommittedRowReachesAPeer() throws {
        try checkWritingDaemonStops(order: "store-first")
    }

    /// A `.groupStoreDidSave` observer on the main queue, registered by a
    /// daemon whose async top level awaits its `ServiceGroup`, gets every save.
    func testAMainQueueObserver_inADaemonWithAnAsyncTopLevel_getsEverySave() throws {
        try exec("writer", "CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, author TEXT NOT NULL, n INTEGER NOT NULL)")
        let daemon = try spawn(
            "groupstore-peer", ["--group", group, "--member", "daemon", "--service-order", "store-first", "--observe-on-main"],
            name: "daemon observing on main")
        try daemon.waitForStderr("peer: daemon ready")
        var seqs: [Int] = []
        for n in 1...3 { seqs.append(try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', \(n))")) }
        for seq in seqs { try daemon.waitForStderr("peer: main observer seq \(seq)") }
        _ = try stop(daemon)
    }

    /// A migration that fails is named, with SQLite's reason, and the
    /// process exits non-zero (nothing of it committed).
    func testAFailingMigration_isNamedInTheOneLineError() throws {
        let peer = try spawn(
            "groupstore-peer",
            ["--group", group, "--member", "app", "--extra-migration", "v2-add-index=CREATE INDEX i ON nowhere(x)"], name: "peer")
        XCTAssertNotEqual(try peer.waitForExit(timeout: 20), 0)
        let errors = peer.errors.joined(separator: "\n")
        XCTAssertTrue(errors.contains("migration 'v2-add-index' failed in \(group)"), errors)
        XCTAssertTrue(errors.contains("no such table: main.nowhere"), errors)
        XCTAssertEqual(try read { db in try db.tableExists("items") }, true, "the migration before it stays")
    }

    /// A store file this process may not write is refused when the store
    /// opens, naming the file and the member, not at the first write.
    func testAReadOnlyStoreFile_isRefusedAtOpen_namingTheFileAndTheMember() throws {
        try exec("writer", "CREATE TABLE items(id INTEGER PRIMARY KEY, author TEXT NOT NULL, n INTEGER NOT NULL)")
        // Another user (root may write anything): the group is theirs, but the database is not writable.
        let setup = try spawn("/bin/sh", ["-c", "chown -R nobody:nogroup \"$0\" && chmod 0444 \"$0/store.sqlite\"", group])
        XCTAssertEqual(try setup.waitForExit(), 0, "\(setup.errors)")
        let groupstore = ChildProcess.productsDirectory.appendingPathComponent("groupstore").path
        let exec = try spawn(
            "/usr/bin/setpriv",
            [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", groupstore, "exec", "--group", group, "--member", "reader", "--sql",
                "SELECT count(*) FROM items",
            ], name: "exec as nobody")
        XCTAssertNotEqual(try exec.waitForExit(timeout: 20), 0, "\(exec.output)")
        let errors = exec.errors.joined(separator: "\n")
        XCTAssertTrue(errors.contains("member 'reader' cannot write \(group)/store.sqlite"), errors)
    }

    /// 1,000 `exec`s as one member while a watcher keeps up: the writer pins
    /// nothing, and `gc` prunes what the watcher consumed.
    func testAThousandExecsAsOneMember_pinNothing_andGCPrunesWhatTheWatcherConsumed() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let watcher = try watch("watcher")
        let count = 1_000
        let loop = """
            for i in $(seq 1 \(count)); do "$0" exec --group "$1" --member tool --sql "INSERT INTO t VALUES ($i)" >/dev/null || exit 1; done
            """
        let writer = try spawn("/bin/sh", ["-c", loop, ChildProcess.productsDirectory.appendingPathComponent("groupstore").path, group])
        XCTAssertEqual(try writer.waitForExit(timeout: 600), 0, "\(writer.errors.suffix(3))")
        try watcher.waitForLines(count, timeout: 120)

        let head = try read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM groupstore_transaction") ?? 0 }
        // The watcher's cursor reaches the head once it has processed its saves.
        let status = try watcher.wait("the watcher's cursor to reach \(head)", timeout: 30) { _, _, _ -> [String: Any]? in
            guard let object = try? self.statusJSON(), let members = object["members"] as? [[String: Any]],
                members.first(where: { $0["name"] as? String == "watcher" })?["cursor"] as? Int == Int(head)
            else { return nil }
            return object
        }
        let members = try XCTUnwrap(status["members"] as? [[String: Any]])
        XCTAssertTrue(members.first { $0["name"] as? String == "tool" }?["cursor"] is NSNull, "the exec member keeps no cursor")
        XCTAssertEqual(status["holdingBack"] as? [String], [])

        let gc = try spawn("groupstore", ["gc", "--group", group, "--format", "json"])
        XCTAssertEqual(try gc.waitForExit(), 0, "\(gc.errors)")
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(gc.output.joined().utf8)) as? [String: Any])
        XCTAssertEqual(report["prunedThrough"] as? Int, Int(head))
        XCTAssertEqual((report["heldBackBy"] as? [Any])?.count, 0)
        // Everything the watcher consumed is gone (this gc, or the watcher's
        // own periodic pruning, removed it), but the newest transaction, kept
        // as the high-water mark of sequence numbers.
        XCTAssertEqual(try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM groupstore_transaction") }, 1)
    }

    /// A member gone for good is named by `status` and `gc`, and `retire`
    /// removes it (refusing while it is live).
    func testAMemberHoldingBackPruning_isNamed_andRetireRemovesIt_butNotWhileLive() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let gone = try watch("gone")
        let refused = try spawn("groupstore", ["retire", "--group", group, "--member", "gone"])
        XCTAssertNotEqual(try refused.waitForExit(), 0)
        XCTAssertTrue(refused.errors.joined().contains("already live"), "\(refused.errors)")
        gone.send(SIGTERM)
        XCTAssertEqual(try gone.waitForExit(), 0)
        for id in 1...3 { try exec("tool", "INSERT INTO t VALUES (\(id))") }

        let status = try statusJSON()
        XCTAssertEqual(status["holdingBack"] as? [String], ["gone"])
        let gc = try spawn("groupstore", ["gc", "--group", group])
        XCTAssertEqual(try gc.waitForExit(), 0)
        XCTAssertTrue(gc.output.joined().contains("held back by 'gone'"), "\(gc.output)")

        let retire = try spawn("groupstore", ["retire", "--group", group, "--member", "gone", "--format", "json"])
        XCTAssertEqual(try retire.waitForExit(), 0, "\(retire.errors)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: group + "/members/gone"))
        let after = try spawn("groupstore", ["gc", "--group", group, "--format", "json"])
        XCTAssertEqual(try after.waitForExit(), 0)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(after.output.joined().utf8)) as? [String: Any])
        XCTAssertEqual(
            report["prunedThrough"] as? Int, try read { db in try Int.fetchOne(db, sql: "SELECT max(seq) FROM groupstore_transaction") })
    }

    private func statusJSON() throws -> [String: Any] {
        let status = try spawn("groupstore", ["status", "--group", group, "--format", "json"])
        XCTAssertEqual(try status.waitForExit(), 0, "\(status.errors)")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.output.joined().utf8)) as? [String: Any])
    }
}
