import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import XCTest

/// The bridge on an embedded remote whose file is replaced by garbage,
/// moved away or restored from an older copy.
final class EmbeddedRecoveryTests: CloudTestCase {
    override class var remoteKind: RemoteKind { .embedded }
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)"

    func testARemoteReplacedByGarbage_isReported_andNothingLocalIsLost() async throws {
        let a = try open("a", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'one')") }
        try await sync("a", tables: ["note"])
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n2', 'two')") }
        let remote = try embeddedRemote()
        // Replaced (not written in place): a new file of garbage under the same name.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: remotePath + suffix) }
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: remotePath))
        let summary = try await CloudSync(try configuration("a", tables: ["note"], remote: remote)).syncOnce()
        XCTAssertNotNil(summary.error)
        XCTAssertEqual(summary.errorCode, CloudSyncError.Code.badRemote.rawValue, summary.error ?? "")
        XCTAssertTrue(summary.error?.contains(remotePath) ?? false, summary.error ?? "")
        XCTAssertEqual(try dump(a, "note"), ["t:n1|t:one", "t:n2|t:two"])
        XCTAssertEqual(try CloudSyncStatus.read(group: group("a")).pending, 1, "n2 still waits to be uploaded")
        XCTAssertEqual(try CloudSyncStatus.read(group: group("a")).lastSync?.errorCode, "badRemote")
    }

    func testAFreshRemoteAtTheSamePath_getsEverythingUploadedAgain_nothingLocalIsDeleted() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('a1', 'x'), ('a2', 'y')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        // The remote is moved away; the next sync creates a new, empty one at the path.
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.moveItem(atPath: remotePath + suffix, toPath: root + "/moved" + suffix)
        }
        let summary = try await sync("a", tables: ["note"])
        XCTAssertEqual(summary.uploaded, 2)
        XCTAssertEqual(try dump(a, "note"), ["t:a1|t:x", "t:a2|t:y"], "nothing of A is deleted")
        try await sync("b", tables: ["note"])
        XCTAssertEqual(try dump(b, "note"), ["t:a1|t:x", "t:a2|t:y"], "nor of B")
    }

    func testARemoteRestoredFromAnOlderCopy_getsNewerRecordsUploadedAgain() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('old', 'kept')") }
        try await sync("a", tables: ["note"])
        let backup = root + "/backup.sqlite"
        try DatabaseQueue(path: remotePath).backup(to: DatabaseQueue(path: backup))
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('x1', 'after the backup')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        XCTAssertEqual(try dump(b, "note").count, 2)
        // The remote goes back to the copy (renamed over it, as a restore does),
        // and B writes enough that the restored log's numbers pass A's tags.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: remotePath + suffix) }
        XCTAssertEqual(rename(backup, remotePath), 0)
        try await b.write { db in try db.execute(sql: "INSERT INTO note VALUES ('b1', 'one'), ('b2', 'two'), ('b3', 'three')") }
        try await sync("b", tables: ["note"])
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        let expected = ["t:b1|t:one", "t:b2|t:two", "t:b3|t:three", "t:old|t:kept", "t:x1|t:after the backup"]
        XCTAssertEqual(try dump(a, "note"), expected)
        XCTAssertEqual(try dump(b, "note"), expected)
    }
}
