import Foundation
import GRDB
import GroupStore
import Synchronization
import XCTest

@testable import GroupStoreCloud

/// What a synced change costs the groups' databases: the uploading bridge
/// takes a save in and prepares its upload in one write transaction, and
/// acknowledges it and records the sync in another; keys made pending by any
/// transaction wake the upload (``UploadWork``, ``EngineState/record(_:)``).
final class LocalWritesTests: CloudTestCase {
    /// Counts the write transactions committed on a pool's writer connection.
    private final class Commits: TransactionObserver, @unchecked Sendable {
        // `@unchecked Sendable`: `count` is a Mutex; GRDB calls the observer on the writer's queue only.
        let count = Mutex(0)
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { count.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    private func engine(_ bridge: GroupStore, _ remote: any CloudDatabase, group: String) async throws -> SyncEngine {
        try await SyncEngine.make(
            store: bridge, configuration: try configuration(group, tables: ["note"], remote: remote),
            events: EventHub(label: "test", object: { nil }), tracer: SyncTracer(), oneShot: false)
    }

    func testASyncedChange_costsTheUploadingBridgeTwoWriteTransactions() async throws {
        let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"
        let app = try open("a", schema: schema)
        let bridge = try open("a", member: "cloud", schema: schema)
        let engine = try await engine(bridge, remote(), group: "a")
        try await synced(engine, complete: false)
        let commits = Commits()
        bridge.pool.add(transactionObserver: commits, extent: .observerLifetime)

        for index in 0..<3 {
            let written = try await app.writeWithSequence { db in
                try db.execute(sql: "INSERT INTO note VALUES (?, 'x')", arguments: ["n\(index)"])
            }
            let save = Save(
                seq: try XCTUnwrap(written.seq), author: "app", committedAt: Date(),
                changes: [EntityChange(entity: "note", inserted: [.text("n\(index)")])])
            commits.count.withLock { $0 = 0 }
            let taken = await engine.takeIn(delivered: [save])
            XCTAssertTrue(taken)
            let reasons = await engine.state.reasons
            XCTAssertEqual(reasons, [.keysMarked], "a save taken in wakes the upload")
            let synced = await engine.sync(complete: false, fetch: false)
            XCTAssertNil(synced.summary.error)
            XCTAssertEqual(synced.summary.uploaded, 1)
            XCTAssertEqual(synced.summary.pending, 0)
            XCTAssertEqual(
                commits.count.withLock { $0 }, 2,
                "change \(index): intake with the prepared upload, then the acknowledgement with last_sync")
        }
        let status = try await bridge.pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM groupstore_cloud_meta WHERE key = 'last_sync'")
        }
        XCTAssertTrue(status?.contains("\"uploaded\":1") == true, "last_sync records the sync: \(status ?? "nil")")
    }

    /// One sync of `engine`, failing the test if it failed.
    private func synced(_ engine: SyncEngine, complete: Bool, fetch: Bool = true, line: UInt = #line) async throws {
        let result = await engine.sync(complete: complete, fetch: fetch)
        XCTAssertNil(result.summary.error, line: line)
    }

    /// Writes `sql` in `store` and hands its save to `engine`, as the
    /// bridge's member is delivered it.
    private func deliver(_ sql: String, in store: GroupStore, to engine: SyncEngine) async throws {
        let written = try await store.writeWithSequence { db in try db.execute(sql: sql) }
        let seq = try XCTUnwrap(written.seq)
        let save = try await store.pool.read { db in
            try XCTUnwrap(store.historyIntake(db, after: seq - 1, limit: 10).saves.first { $0.seq == seq })
        }
        let taken = await engine.takeIn(delivered: [save])
        XCTAssertTrue(taken)
    }

    /// Keys an acknowledgement's transaction makes pending (what the app's
    /// trigger did when the bridge settled a conflict) in a table the upload
    /// had passed already are uploaded by the same sync, not left for a
    /// later wake-up.
    func testWorkGivenDuringAnUpload_isUploadedBySameSync() async throws {
        let schema = """
            CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT);
            CREATE TABLE audit(id TEXT PRIMARY KEY, body TEXT);
            CREATE TRIGGER note_audit AFTER UPDATE ON note BEGIN INSERT OR REPLACE INTO audit VALUES ('a-' || new.id, new.body); END;
            """
        let shared = remote()
        func engine(_ group: String, _ bridge: GroupStore) async throws -> SyncEngine {
            // The audit table first: the note's conflict, settled after it, changes an audit row.
            try await SyncEngine.make(
                store: bridge, configuration: try configuration(group, tables: ["audit", "note"], remote: shared),
                events: EventHub(label: "test", object: { nil }), tracer: SyncTracer(), oneShot: false)
        }
        let app = try open("a", schema: schema)
        let a = try await engine("a", try open("a", member: "cloud", schema: schema))
        let other = try open("b", schema: schema)
        let b = try await engine("b", try open("b", member: "cloud", schema: schema))
        try await synced(a, complete: false)
        try await synced(b, complete: false)
        try await deliver("INSERT INTO note VALUES ('n1', 'first')", in: app, to: a)
        try await synced(a, complete: false, fetch: false)
        try await synced(b, complete: false)
        try await deliver("UPDATE note SET body = 'theirs' WHERE id = 'n1'", in: other, to: b)
        try await synced(b, complete: false, fetch: false)
        // This group edits n1 too: its upload meets a conflict, the server's version wins, and the
        // app's trigger, run by that settlement, writes the audit row the upload had passed.
        try await deliver("UPDATE note SET body = 'mine' WHERE id = 'n1'", in: app, to: a)
        let synced = await a.sync(complete: false, fetch: false)
        XCTAssertNil(synced.summary.error)
        XCTAssertGreaterThan(synced.summary.conflicts, 0, "\(synced.summary)")
        let pendingRows = try await app.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM groupstore_cloud_pending").map(\.description)
        }
        let reasons = await a.state.reasons
        XCTAssertEqual(
            synced.summary.pending, 0,
            "what the settlement caused was settled by the same sync: \(synced.summary) \(pendingRows) \(reasons)")
    }
}
