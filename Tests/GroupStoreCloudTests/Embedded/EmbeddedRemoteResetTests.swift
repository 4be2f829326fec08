import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import Subprocesses
import XCTest

/// The embedded remote restored in place from an older copy (`sqlite3
/// .backup` / `.restore`, as the fault suite does) under two groups: what
/// ``RemoteResetTests`` replays on the in-memory remote, where the remote's
/// answer matters (the delete's edit time, from the file's tombstone).
final class EmbeddedRemoteResetTests: CloudTestCase {
    override class var remoteKind: RemoteKind { .embedded }

    private func sqlite3(_ command: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let process = try Subprocess(URL(fileURLWithPath: "/usr/bin/sqlite3"), [remotePath, ".timeout 10000", command])
        XCTAssertEqual(process.waitForExit(timeout: 60), 0, "sqlite3 \(command) failed: \(process.errors)", file: file, line: line)
    }

    private func notes(_ store: GroupStore) throws -> [String] {
        try store.pool.read { db in try String.fetchAll(db, sql: "SELECT id || ':' || body FROM note ORDER BY id") }
    }

    /// Groups a and b, both holding n1 = v1 as synced.
    private func twoGroupsInSync() async throws -> (GroupStore, GroupStore) {
        let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"
        let (a, b) = (try open("a", schema: schema), try open("b", schema: schema))
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v1')") }
        for name in ["a", "b"] { try await sync(name, tables: ["note"]) }
        return (a, b)
    }

    /// b syncs while a brings n1 back and deletes it; after the groups sync
    /// in turn, a's delete holds in both groups and on the remote.
    private func assertADeleteWins(_ a: GroupStore, _ b: GroupStore, file: StaticString = #filePath, line: UInt = #line) async throws {
        try await syncB(through: try embeddedRemote(), whileABringsN1BackAndDeletesIt: a)
        for name in ["a", "b", "a", "b"] { try await sync(name, tables: ["note"]) }
        XCTAssertEqual(try notes(a), [], "a", file: file, line: line)
        XCTAssertEqual(try notes(b), [], "b", file: file, line: line)
        let live = try await embeddedRemote().fetchChanges(in: .private("alice"), since: nil, limit: 1000).changed
        XCTAssertEqual(live.map(\.id.name), [], "the remote's live records", file: file, line: line)
    }

    /// Both groups acknowledged n1 = v2; the file is restored from a copy
    /// holding v1. b lists it and brings v2 back, but before its upload a
    /// brings v2 back first and then deletes n1: b's upload meets that
    /// delete, which the file's tombstone dates after the version b brings
    /// back, and the delete wins (without the time, n1 came back).
    func testARestoredRemote_aDeleteMadeAfterTheVersionAnotherGroupBringsBack_winsOverIt() async throws {
        let (a, b) = try await twoGroupsInSync()
        let copy = root + "/copy.sqlite"
        try sqlite3(".backup '\(copy)'")
        try await a.write { db in try db.execute(sql: "UPDATE note SET body = 'v2' WHERE id = 'n1'") }
        for name in ["a", "b"] { try await sync(name, tables: ["note"]) }
        try sqlite3(".restore '\(copy)'")
        try await assertADeleteWins(a, b)
    }

    /// The file is moved away and a new, empty remote takes its place. b
    /// lists it and brings n1 back as a new record, but before its upload a
    /// brings n1 back first and then deletes it: b's save, sent without a
    /// tag, meets the tombstone of a delete edited after it, and the file
    /// answers it as a conflict with the delete's time instead of creating
    /// n1 again (the replaced trial 57 of seed 1795847270792).
    func testAReplacedRemote_aDeleteMadeAfterTheVersionAnotherGroupBringsBackAsANewRecord_winsOverIt() async throws {
        let (a, b) = try await twoGroupsInSync()
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.moveItem(atPath: remotePath + suffix, toPath: root + "/moved" + suffix)
        }
        try await assertADeleteWins(a, b)
    }
}
