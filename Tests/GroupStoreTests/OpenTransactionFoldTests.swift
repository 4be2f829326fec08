import Foundation
import GRDB
import Synchronization
import XCTest

@testable import GroupStore

/// The cloud bridge folds the changes of its write transaction before it
/// commits (``GroupStore/openTransactionChanges(_:)``); the seal of that
/// transaction reuses the fold instead of folding the rows again, only while
/// it is what the seal would fold.
final class OpenTransactionFoldTests: StoreTestCase {
    private func payload(_ store: GroupStore, _ body: @escaping (Database) throws -> Void) async throws -> Save {
        let reader = try open("peer")
        let stream = reader.saves()
        try await reader.start()
        try store.writeBlocking(body)
        let received = try await first(1, of: stream)
        return try XCTUnwrap(received.first)
    }

    func testTheSeal_reusesTheFold_whenNothingWasRecordedAfterIt() async throws {
        let store = try open("bridge")
        try await store.write { db in try db.execute(sql: "CREATE TABLE t(id TEXT PRIMARY KEY, v)") }
        let folded = Mutex<[EntityChange]>([])
        let save = try await payload(store) { db in
            try db.execute(sql: "INSERT INTO t VALUES ('a', 1), ('b', 2)")
            let changes = try store.openTransactionChanges(db)
            folded.withLock { $0 = changes }
            XCTAssertNotNil(store.openFold.withLock { $0 }, "the fold is kept for the seal")
        }
        XCTAssertEqual(save.changes, folded.withLock { $0 })
        XCTAssertEqual(save.change(of: "t")?.inserted, [.text("a"), .text("b")])
        XCTAssertNil(store.openFold.withLock { $0 }, "the seal took it")
    }

    func testTheSeal_foldsAgain_whenARowWasRecordedAfterTheFold() async throws {
        let store = try open("bridge")
        try await store.write { db in try db.execute(sql: "CREATE TABLE t(id TEXT PRIMARY KEY, v)") }
        let save = try await payload(store) { db in
            try db.execute(sql: "INSERT INTO t VALUES ('a', 1)")
            _ = try store.openTransactionChanges(db)
            try db.execute(sql: "INSERT INTO t VALUES ('late', 2)")
        }
        XCTAssertEqual(save.change(of: "t")?.inserted, [.text("a"), .text("late")], "the row written after the fold is published")
    }

    func testAFoldOfATransactionRolledBack_isNeverTheNextSeals() async throws {
        let store = try open("bridge")
        try await store.write { db in try db.execute(sql: "CREATE TABLE t(id TEXT PRIMARY KEY, v)") }
        struct Abort: Error {}
        XCTAssertThrowsError(
            try store.writeBlocking { db in
                try db.execute(sql: "INSERT INTO t VALUES ('gone', 1)")
                _ = try store.openTransactionChanges(db)
                throw Abort()
            })
        // The same change ids are used again by the next transaction.
        let save = try await payload(store) { db in try db.execute(sql: "INSERT INTO t VALUES ('kept', 1)") }
        XCTAssertEqual(save.change(of: "t")?.inserted, [.text("kept")])
    }
}
