import Foundation
import GRDB
import GroupStore
import XCTest

/// Saves flowing between real processes: every committed transaction reaches
/// every other member once, in order, with the right keys.
final class DeliveryProcessTests: ProcessTestCase {
    /// Requirement 1.
    func testThreeWritingPeers_eachReceiveEveryOtherPeersSaves_inOrderOnce() throws {
        let writes = 150
        let names = ["alpha", "beta", "gamma"]
        let peers = try names.map { name in
            try peer(name, ["--writes", "\(writes)", "--expect", "\(2 * writes)", "--wait-for-go", "--log-level", "warning"])
        }
        for peer in peers { peer.writeLine("go") }
        for peer in peers { XCTAssertEqual(try peer.waitForExit(timeout: 120), 0, "\(peer.name) failed: \(peer.errors)") }

        let rows = try read { db in try Row.fetchAll(db, sql: "SELECT id, author FROM items") }
        XCTAssertEqual(rows.count, 3 * writes)
        for (name, peer) in zip(names, peers) {
            let received = try saves(peer.output)
            XCTAssertEqual(received.count, 2 * writes, "\(name) received \(received.count) saves")
            assertInOrderOnce(received, name)
            XCTAssertFalse(received.contains { $0.author == name }, "\(name) received its own save")
            let keys = received.flatMap { $0.inserted["items"] ?? [] }
            let expected = rows.filter { ($0["author"] as String) != name }.map { $0["id"] as Int64 }
            XCTAssertEqual(keys.count, Set(keys).count, "\(name) received a key twice")
            XCTAssertEqual(Set(keys), Set(expected), "\(name) received wrong keys")
            for save in received {
                // Each peer transaction inserted exactly one row by its author.
                let key = try XCTUnwrap(save.inserted["items"]?.first)
                XCTAssertEqual(rows.first { $0["id"] == key }?["author"], save.author)
            }
        }
    }

    /// Requirement 5.
    func testRestartedMember_receivesOnStartWhatPeersWroteWhileItWasDown() throws {
        try exec("writer", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
        let first = try watch("sleeper")
        first.send(SIGTERM)
        XCTAssertEqual(try first.waitForExit(), 0)

        for body in ["one", "two", "three"] {
            try exec("writer", "INSERT INTO notes(body) VALUES ('\(body)')")
        }
        let second = try watch("sleeper")
        let received = try saves(second.waitForLines(3))
        XCTAssertEqual(received.map { $0.inserted["notes"] ?? [] }, [[1], [2], [3]])
        XCTAssertEqual(Set(received.map(\.author)), ["writer"])
        assertInOrderOnce(received, "sleeper")
    }

    /// Requirement 6.
    func testValueObservationInThisProcess_emitsNewValue_afterAnotherProcessCommits() throws {
        try exec("writer", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
        let store = try GroupStore(GroupConfiguration(directory: group, member: try MemberName("observer")))
        defer { store.closeBlocking() }
        try store.startBlocking()

        let values = ValueRecorder<Int>()
        let observation = ValueObservation.tracking { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") ?? 0 }
        let cancellable = observation.start(
            in: store.pool, scheduling: .async(onQueue: DispatchQueue(label: "observation")),
            onError: { XCTFail("observation failed: \($0)") }, onChange: values.append)
        defer { cancellable.cancel() }
        try values.waitFor("the initial value 0") { $0.last == 0 }

        try exec("writer", "INSERT INTO notes(body) VALUES ('hello')")
        try values.waitFor("the value 1 after the peer's commit") { $0.last == 1 }
        try exec("writer", "INSERT INTO notes(body) VALUES ('again')")
        try values.waitFor("the value 2 after the second commit") { $0.last == 2 }
    }

    /// Requirement 7.
    func testRowInsertedBySqlite3Shell_reachesWatchingMember() throws {
        try exec("writer", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
        let watcher = try watch("dashboard")
        let shell = try spawn(
            "/usr/bin/sqlite3", [group + "/store.sqlite", "INSERT INTO notes(id, body) VALUES (41, 'from the shell')"])
        XCTAssertEqual(try shell.waitForExit(), 0, "sqlite3 failed: \(shell.errors)")

        let received = try saves(watcher.waitForLines(1))
        XCTAssertEqual(received[0].author, Save.externalAuthor)
        XCTAssertEqual(received[0].inserted["notes"], [41])

        // And the next library write is its own transaction, not merged into the shell's.
        try exec("writer", "UPDATE notes SET body = 'edited' WHERE id = 41")
        let next = try saves(watcher.waitForLines(2))[1]
        XCTAssertEqual(next.author, "writer")
        XCTAssertEqual(next.updated["notes"], [41])
    }

    func testTableCreatedBySqlite3Shell_isTrackedByRunningMembers_andItsLaterRowsArrive() throws {
        try exec("writer", "CREATE TABLE notes(id INTEGER PRIMARY KEY)")
        let watcher = try watch("dashboard")
        // Rows written right after the shell created the table, before any
        // member installed its triggers, are delivered too.
        let create = try spawn(
            "/usr/bin/sqlite3",
            [group + "/store.sqlite", "BEGIN; CREATE TABLE late(id INTEGER PRIMARY KEY); INSERT INTO late(id) VALUES (6); COMMIT;"])
        XCTAssertEqual(try create.waitForExit(), 0)
        let first = try saves(watcher.waitForLines(1))[0]
        XCTAssertEqual(first.author, Save.externalAuthor)
        XCTAssertEqual(first.inserted["late"], [6])
        XCTAssertTrue(first.reset.contains("late"), "the new table is announced")
        let insert = try spawn("/usr/bin/sqlite3", [group + "/store.sqlite", "INSERT INTO late(id) VALUES (7)"])
        XCTAssertEqual(try insert.waitForExit(), 0)
        let save = try saves(watcher.waitForLines(2))[1]
        XCTAssertEqual(save.author, Save.externalAuthor)
        XCTAssertEqual(save.inserted["late"], [7])
    }

    func testEntitiesOption_deliversOnlySavesTouchingInScopeEntities() throws {
        try exec("writer", "CREATE TABLE a(id INTEGER PRIMARY KEY); CREATE TABLE b(id INTEGER PRIMARY KEY)")
        let watcher = try watch("only-b", extra: ["--entities", "b"])
        try exec("writer", "INSERT INTO a(id) VALUES (1)")
        try exec("writer", "INSERT INTO b(id) VALUES (2)")
        try exec("writer", "INSERT INTO a(id) VALUES (3); INSERT INTO b(id) VALUES (4)")
        let received = try saves(watcher.waitForLines(2))
        XCTAssertEqual(received.map { $0.inserted["b"] ?? [] }, [[2], [4]])
        XCTAssertTrue(received.allSatisfy { $0.inserted["a"] == nil }, "out-of-scope entity a was delivered")
    }
}

/// Collects values from another thread and waits for a condition on them.
final class ValueRecorder<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `values` is guarded by `condition`.
    private let condition = NSCondition()
    private var values: [Value] = []

    func append(_ value: Value) {
        condition.withLock {
            values.append(value)
            condition.broadcast()
        }
    }

    func waitFor(
        _ what: String, timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line, _ predicate: ([Value]) -> Bool
    ) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(values) {
            if !condition.wait(until: deadline) && !predicate(values) {
                XCTFail("timed out after \(timeout) s waiting for \(what); values: \(values)", file: file, line: line)
                throw HarnessError(message: "timed out waiting for \(what)")
            }
        }
    }
}
