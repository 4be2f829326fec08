import Foundation
import GRDB
import GroupStore
import Synchronization
import XCTest

/// GRDB `ValueObservation`s on a member's pool refresh when other members
/// commit: two stores in one process stand for two processes (each has a
/// pool of its own, so each sees the other's commits as another
/// connection's).
final class ObservationTests: StoreTestCase {
    /// The values an observation of `count(*) FROM table` produced.
    private final class Counts: Sendable {
        private let values = Mutex<[Int]>([])
        func append(_ value: Int) { values.withLock { $0.append(value) } }
        var last: Int? { values.withLock { $0.last } }
    }

    private func observeCount(of table: String, in store: GroupStore) -> (Counts, AnyDatabaseCancellable) {
        let counts = Counts()
        let cancellable = ValueObservation.tracking { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? -1 }
            .start(
                in: store.pool, scheduling: .async(onQueue: DispatchQueue(label: "observation")),
                onError: { XCTFail("observation failed: \($0)") }, onChange: counts.append)
        return (counts, cancellable)
    }

    func testObservationOfATableAnotherMemberCreatedWhileThisOneRan_refreshesOnItsRows() async throws {
        let a = try open("a")
        let b = try open("b")
        let saves = b.saves()
        try await b.start()
        try await a.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        _ = try await first(1, of: saves)
        // b has notified its observers of t, so its writer connection has
        // looked the schema up; u is created after that, by the other member.
        try await a.write { db in try db.execute(sql: "CREATE TABLE u(id INTEGER PRIMARY KEY)") }
        _ = try await first(1, of: saves)
        let (counts, cancellable) = observeCount(of: "u", in: b)
        defer { cancellable.cancel() }
        try await waitUntil("the first value of count(*) FROM u") { counts.last == 0 }
        try await a.write { db in try db.execute(sql: "INSERT INTO u VALUES (1)") }
        try await waitUntil("count(*) FROM u to become 1 after the other member's insert") { counts.last == 1 }
    }

    /// Member a with table t of one row, then `prepare`; then member b
    /// started, observing `count(*) FROM t` (its first value seen).
    private func observedGroup(
        prepare: () async throws -> Void = {}
    ) async throws -> (a: GroupStore, saves: SaveStream, counts: Counts, cancellable: AnyDatabaseCancellable) {
        let a = try open("a")
        try await a.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        try await prepare()
        let b = try open("b")
        let saves = b.saves()
        try await b.start()
        let (counts, cancellable) = observeCount(of: "t", in: b)
        try await waitUntil("the first value of count(*) FROM t") { counts.last == 1 }
        return (a, saves, counts, cancellable)
    }

    /// Another program gives the database a history of another epoch (as a
    /// restored copy would), after `sql`; returns the save that follows.
    private func replaceTheHistory(after sql: String, saves: SaveStream) async throws -> Save? {
        let outside = try DatabaseQueue(path: group + "/store.sqlite")
        try await outside.write { db in
            try db.execute(sql: sql)
            try db.execute(sql: "UPDATE groupstore_meta SET value = 'another-epoch' WHERE key = 'epoch'")
        }
        try outside.close()
        return try await first(1, of: saves).first
    }

    func testObservation_refreshesAfterAResync() async throws {
        let (_, saves, counts, cancellable) = try await observedGroup()
        defer { cancellable.cancel() }
        // A row the new history does not list: b's cursor means nothing
        // there, and only the resync tells it.
        let received = try await replaceTheHistory(
            after: "INSERT INTO t VALUES (2); DELETE FROM groupstore_change WHERE id = (SELECT max(id) FROM groupstore_change)",
            saves: saves)
        XCTAssertEqual(received?.kind, .resync)
        try await waitUntil("count(*) FROM t to become 2 after the resync") { counts.last == 2 }
    }

    func testAResync_withATableThisProcessCannotOpen_stillRefreshesTheOthers() async throws {
        let (a, saves, counts, cancellable) = try await observedGroup {
            // Another tool left a virtual table of a module this process lacks.
            let tool = try DatabaseQueue(path: group + "/store.sqlite")
            try await tool.writeWithoutTransaction { db in
                let version = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
                try db.execute(sql: "PRAGMA writable_schema = ON")
                try db.execute(
                    sql:
                        "INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) VALUES ('table', 'vx', 'vx', 0, 'CREATE VIRTUAL TABLE vx USING nosuchmodule(a)')"
                )
                try db.execute(sql: "PRAGMA schema_version = \(version + 1)")
                try db.execute(sql: "PRAGMA writable_schema = OFF")
            }
            try tool.close()
        }
        defer { cancellable.cancel() }
        let received = try await replaceTheHistory(after: "SELECT 1", saves: saves)
        XCTAssertEqual(received?.kind, .resync)
        // An ordinary save after the resync still refreshes the observation.
        try await a.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        _ = try await first(1, of: saves)
        try await waitUntil("count(*) FROM t to become 2 after the other member's insert") { counts.last == 2 }
    }
}
