import Foundation
import GRDB
import GroupStore
import XCTest

@testable import GroupStoreCloud

/// A sync does what its reasons say (``EngineState/Reason``): saves taken
/// in are uploaded by a sync that does not fetch, and a sync with no reason
/// left uploads nothing and calls the remote for nothing.
final class QuietSyncTests: CloudTestCase {
    func testSavesTakenIn_areUploadedWithoutAFetch_andASyncWithNoReasonLeftSendsNothing() async throws {
        let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"
        let app = try open("a", schema: schema)
        let bridge = try open("a", member: "cloud", schema: schema)
        let recording = RecordingRemote(remote())
        let engine = try await SyncEngine.make(
            store: bridge, configuration: try configuration("a", tables: ["note"], remote: recording),
            events: EventHub(label: "test", object: { nil }), tracer: SyncTracer(), oneShot: false)
        let first = await engine.sync(complete: false)
        XCTAssertNil(first.summary.error)
        XCTAssertEqual(first.summary.pending, 0)

        // Saves as the bridge's member is delivered them, more than one upload batch.
        let count = SyncEngine.maxBatchRecords + 88
        for index in 0..<count {
            let key = "n\(index)"
            let written = try await app.writeWithSequence { db in try db.execute(sql: "INSERT INTO note VALUES (?, 'x')", arguments: [key])
            }
            let save = Save(
                seq: try XCTUnwrap(written.seq), author: "app", committedAt: Date(),
                changes: [EntityChange(entity: "note", inserted: [.text(key)])])
            let taken = await engine.takeIn(delivered: [save])
            XCTAssertTrue(taken)
        }
        let reasons = await engine.state.reasons
        XCTAssertEqual(reasons, [.keysMarked])
        let woken = await engine.sync(complete: false, fetch: false)
        XCTAssertNil(woken.summary.error)
        XCTAssertEqual(woken.summary.uploaded, count, "the saves taken in are uploaded by a sync woken without a fetch")
        XCTAssertEqual(woken.summary.pending, 0)

        let sent = recording.changes.count
        let idle = await engine.sync(complete: false, fetch: false)
        XCTAssertNil(idle.summary.error)
        XCTAssertEqual(idle.summary.uploaded + idle.summary.fetched, 0)
        XCTAssertEqual(recording.changes.count, sent, "a sync with no reason to upload sent something")
        let left = await engine.state.reasons
        XCTAssertEqual(left, [], "no reason to work is left after a sync that did everything")
    }
}
