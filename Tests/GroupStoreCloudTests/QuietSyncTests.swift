import Foundation
import GRDB
import GroupStore
import XCTest

@testable import GroupStoreCloud

/// A sync woken with nothing fetched and nothing pending after the last one
/// may end early ("quiet"): but only when it took nothing in itself. A
/// backlog of local transactions taken in at its start is work to upload.
final class QuietSyncTests: CloudTestCase {
    func testABacklogTakenInAtTheStartOfASync_isUploadedInThatSync() async throws {
        let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"
        let app = try open("a", schema: schema)
        let bridge = try open("a", member: "cloud", schema: schema)
        try bridge.start()
        let engine = try await SyncEngine.make(
            store: bridge, configuration: try configuration("a", tables: ["note"]), events: EventHub(label: "test", object: { nil }),
            tracer: SyncTracer())
        let first = await engine.sync(complete: false)
        XCTAssertNil(first.error)
        XCTAssertEqual(first.pending, 0)

        // More transactions than one intake page, while no sync runs; the
        // bridge's member has merged them all (its cursor is at the head).
        let count = HistoryIntake.pageSize + 88
        for index in 0..<count {
            try await app.write { db in try db.execute(sql: "INSERT INTO note VALUES (?, 'x')", arguments: ["n\(index)"]) }
        }
        let head = try await app.pool.read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM groupstore_transaction") ?? 0 }
        _ = try await deadline(20, "the bridge's member to merge through \(head)") {
            while bridge.cursor < head { try await Task.sleep(for: .milliseconds(5)) }
            return true
        }
        // A sync woken by a local save (no fetch asked for).
        let woken = await engine.sync(complete: false, fetch: false)
        XCTAssertNil(woken.error)
        XCTAssertEqual(woken.uploaded, count, "the backlog taken in at the start of the sync must be uploaded by it")
        XCTAssertEqual(woken.pending, 0)
    }
}
