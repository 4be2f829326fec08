import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import XCTest

/// A remote replaced by a fresh one, or restored from an older copy (and
/// written to since), in process on the in-memory remote: the bridge finds
/// it before anything is uploaded, says so, and brings the remote and every
/// group to one state, rolling back nothing acknowledged.
final class RemoteResetTests: CloudTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"

    private func notes(_ store: GroupStore) throws -> [String] {
        try store.pool.read { db in try String.fetchAll(db, sql: "SELECT id || ':' || body FROM note ORDER BY id") }
    }

    private func remoteNotes() async throws -> [String] {
        let batch = try await remote().fetchChanges(in: .private("alice"), since: nil, limit: 1000)
        return batch.changed.map { record -> String in
            if case .text(let body) = record.fields["body"] { return "\(record.id.name):\(body)" }
            return record.id.name
        }.sorted()
    }

    func testAReplacedRemote_isFoundBeforeAnUpload_andGetsEveryRecordAgain() async throws {
        let a = try open("a", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'one'), ('n2', 'two')") }
        try await sync("a", tables: ["note"])
        memoryServer.replace()
        try await a.write { db in try db.execute(sql: "UPDATE note SET body = 'ONE' WHERE id = 'n1'") }
        let sync = CloudSync(try configuration("a", tables: ["note"]))
        let events = sync.events()
        let summary = try await sync.syncOnce()
        XCTAssertNil(summary.error)
        XCTAssertEqual(summary.parked, 0)
        XCTAssertEqual(try notes(a), ["n1:ONE", "n2:two"], "nothing here is deleted or rolled back")
        let remoteNotes = try await remoteNotes()
        XCTAssertEqual(remoteNotes, ["n1:ONE", "n2:two"])
        let status = try CloudSyncStatus.read(group: group("a"))
        XCTAssertEqual(status.remoteReset?.kind, .replaced)
        var sawReset = false
        for await event in events {
            if case .remoteReset(let reset) = event { sawReset = reset.kind == .replaced }
            if case .finished = event { break }
        }
        XCTAssertTrue(sawReset, "the replacement is an event")
    }

    func testARemoteRestoredAndWrittenToSince_isFoundByEveryGroup_andNothingAcknowledgedIsRolledBack() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v1'), ('n2', 'v1')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        let copy = memoryServer.snapshot()
        try await a.write { db in
            try db.execute(sql: "UPDATE note SET body = 'v2' WHERE id = 'n1'; DELETE FROM note WHERE id = 'n2'; INSERT INTO note VALUES ('n3', 'v1')")
        }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        memoryServer.restore(copy)
        // b finds it first and uploads what the remote lost: the remote's log is past a's mark again.
        try await sync("b", tables: ["note"])
        try await b.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n4', 'from b')") }
        try await sync("b", tables: ["note"])
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        let expected = ["n1:v2", "n3:v1", "n4:from b"]
        XCTAssertEqual(try notes(a), expected)
        XCTAssertEqual(try notes(b), expected)
        let remoteNotes = try await remoteNotes()
        XCTAssertEqual(remoteNotes, expected)
        XCTAssertEqual(try CloudSyncStatus.read(group: group("a")).remoteReset?.kind, .restored)
        XCTAssertEqual(try CloudSyncStatus.read(group: group("b")).remoteReset?.kind, .restored)
    }
}
