import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import Synchronization
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

    // MARK: under running groups: an older version brought back must not beat a newer one

    /// a and b in sync (n1, n2 = v1); a updates n1 to v2 and deletes n2, and
    /// syncs; b does not. Returns both stores.
    private func twoGroupsWhereBIsBehind() async throws -> (GroupStore, GroupStore) {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v1'), ('n2', 'v1')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await a.write { db in
            try db.execute(sql: "UPDATE note SET body = 'v2' WHERE id = 'n1'; DELETE FROM note WHERE id = 'n2'; INSERT INTO note VALUES ('n3', 'v1')")
        }
        try await sync("a", tables: ["note"])
        return (a, b)
    }

    private func assertEveryoneHolds(_ expected: [String], _ a: GroupStore, _ b: GroupStore, file: StaticString = #filePath, line: UInt = #line)
        async throws
    {
        XCTAssertEqual(try notes(a), expected, "a", file: file, line: line)
        XCTAssertEqual(try notes(b), expected, "b", file: file, line: line)
        let remoteNotes = try await remoteNotes()
        XCTAssertEqual(remoteNotes, expected, "the remote", file: file, line: line)
        for name in ["a", "b"] {
            let status = try CloudSyncStatus.read(group: group(name))
            XCTAssertEqual(status.pending, 0, "\(name) pending", file: file, line: line)
            XCTAssertEqual(status.parked, 0, "\(name) parked", file: file, line: line)
        }
    }

    func testAReplacedRemote_foundFirstByTheGroupAhead_isNotRolledBackByTheGroupBehind() async throws {
        let (a, b) = try await twoGroupsWhereBIsBehind()
        memoryServer.replace()
        try await sync("a", tables: ["note"])
        // b still holds n1 = v1 and n2, acknowledged by the old remote: older than what a brought back.
        try await sync("b", tables: ["note"])
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await assertEveryoneHolds(["n1:v2", "n3:v1"], a, b)
    }

    func testAReplacedRemote_foundFirstByTheGroupBehind_isNotRolledBack() async throws {
        let (a, b) = try await twoGroupsWhereBIsBehind()
        memoryServer.replace()
        try await sync("b", tables: ["note"])
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await assertEveryoneHolds(["n1:v2", "n3:v1"], a, b)
    }

    /// Both groups list the replaced remote before either uploads; the group
    /// behind uploads first, so the group ahead meets its older version as a
    /// conflict: it is not an edit that beats the newer one, under any policy
    /// that lets the server's edit win (server-wins here).
    func testAReplacedRemote_listedByBothGroupsBeforeEitherUploads_keepsTheNewerVersion() async throws {
        let (a, b) = try await twoGroupsWhereBIsBehind()
        memoryServer.replace()
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n4', 'written after the replacement')") }
        let bSynced = BeforeUpload()
        let bSync = CloudSync(try configuration("b", tables: ["note"]))
        let hooked = HookedRemote(remote()) {
            try await bSynced.run {
                let summary = try await bSync.syncOnce()
                XCTAssertNil(summary.error, "b's sync slipped in failed")
            }
        }
        let summary = try await sync("a", tables: ["note"], remote: hooked)
        XCTAssertTrue(bSynced.ran, "b synced between a's listing and a's upload")
        XCTAssertGreaterThan(summary.conflicts, 0, "a met b's older versions as conflicts")
        try await sync("b", tables: ["note"])
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await assertEveryoneHolds(["n1:v2", "n3:v1", "n4:written after the replacement"], a, b)
    }

    /// Both groups list the replaced remote before either uploads; the group
    /// ahead uploads first, so the group behind meets the newer version as a
    /// conflict with what it brought back, which is no edit: the newer
    /// version is taken, even under client-wins.
    func testAReplacedRemote_theGroupBehindMeetsTheNewerVersionAsAConflict_andTakesItUnderClientWins() async throws {
        let (a, b) = try await twoGroupsWhereBIsBehind()
        memoryServer.replace()
        let aSynced = BeforeUpload()
        let aSync = CloudSync(try configuration("a", tables: ["note"], policy: .clientWins))
        let hooked = HookedRemote(remote()) {
            try await aSynced.run {
                let summary = try await aSync.syncOnce()
                XCTAssertNil(summary.error, "a's sync slipped in failed")
            }
        }
        try await sync("b", tables: ["note"], policy: .clientWins, remote: hooked)
        XCTAssertTrue(aSynced.ran, "a synced between b's listing and b's upload")
        try await sync("a", tables: ["note"], policy: .clientWins)
        try await sync("b", tables: ["note"], policy: .clientWins)
        try await sync("a", tables: ["note"], policy: .clientWins)
        try await assertEveryoneHolds(["n1:v2", "n3:v1"], a, b)
    }

    /// a edits n1 (v1 → v2) after the remote was replaced; both groups list
    /// the new remote before either uploads, and b brings v1 back first: a
    /// meets the version it acknowledged (the same edit time, another tag)
    /// as a conflict, which is its edit's base, not an edit that beats it.
    func testAReplacedRemote_theVersionALocalEditIsBasedOn_broughtBackFirstByTheOtherGroup_isItsBase() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v1')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        memoryServer.replace()
        try await a.write { db in try db.execute(sql: "UPDATE note SET body = 'v2' WHERE id = 'n1'") }
        let bSynced = BeforeUpload()
        let bSync = CloudSync(try configuration("b", tables: ["note"]))
        let hooked = HookedRemote(remote()) {
            try await bSynced.run {
                let summary = try await bSync.syncOnce()
                XCTAssertNil(summary.error, "b's sync slipped in failed")
            }
        }
        try await sync("a", tables: ["note"], remote: hooked)
        XCTAssertTrue(bSynced.ran, "b synced between a's listing and a's upload")
        try await sync("b", tables: ["note"])
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await assertEveryoneHolds(["n1:v2"], a, b)
    }

    /// a deletes n1 after the remote was replaced, before its bridge brought
    /// it back; b brings n1 back first; a inserts n1 again. a's delete still
    /// goes up (on top of b's version), and its new n1 is not settled
    /// against the older one b brought back.
    func testAReplacedRemote_aRecordDeletedHereBeforeItWasBroughtBack_andInsertedAgain_keepsTheNewRow() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v1')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        memoryServer.replace()
        try await a.write { db in try db.execute(sql: "DELETE FROM note WHERE id = 'n1'") }
        let bSynced = BeforeUpload()
        let bSync = CloudSync(try configuration("b", tables: ["note"]))
        let hooked = HookedRemote(remote()) {
            try await bSynced.run {
                let summary = try await bSync.syncOnce()
                XCTAssertNil(summary.error, "b's sync slipped in failed")
            }
        }
        try await sync("a", tables: ["note"], remote: hooked)
        XCTAssertTrue(bSynced.ran, "b synced between a's listing and a's upload")
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v2')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await sync("a", tables: ["note"])
        try await assertEveryoneHolds(["n1:v2"], a, b)
    }

    /// n1 is deleted and created again in a; b saw the delete but not the new
    /// n1. The remote is restored from a copy that holds the old n1: b deletes
    /// it there again (it deleted that version) while a, which listed the
    /// restored remote first, brings its new n1 back: a's upload meets the
    /// delete, whose time the remote does not give, and a's n1 is kept.
    func testARestoredRemote_aRecordDeletedAgainByOneGroupWhileAnotherBringsItsNewerVersionBack_isKept() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v1')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        let copy = memoryServer.snapshot()
        try await a.write { db in try db.execute(sql: "DELETE FROM note WHERE id = 'n1'") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v2')") }
        try await sync("a", tables: ["note"])
        memoryServer.restore(copy)
        let bSynced = BeforeUpload()
        let bSync = CloudSync(try configuration("b", tables: ["note"]))
        let hooked = HookedRemote(remote()) {
            try await bSynced.run {
                let summary = try await bSync.syncOnce()
                XCTAssertNil(summary.error, "b's sync slipped in failed")
            }
        }
        try await sync("a", tables: ["note"], remote: hooked)
        XCTAssertTrue(bSynced.ran, "b synced between a's listing and a's upload")
        try await sync("b", tables: ["note"])
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await assertEveryoneHolds(["n1:v2"], a, b)
    }

    /// a deletes n1 (acknowledged) and creates it again, not uploaded yet;
    /// the remote is restored from a copy that holds the n1 a deleted: that
    /// is older than a's delete, so a's new n1 goes up on top of it instead
    /// of being settled against it.
    func testARestoredRemote_holdingARecordDeletedHereAndCreatedAgainSince_getsTheNewOne() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v1')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        let copy = memoryServer.snapshot()
        try await a.write { db in try db.execute(sql: "DELETE FROM note WHERE id = 'n1'") }
        try await sync("a", tables: ["note"])
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v2')") }
        memoryServer.restore(copy)
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await assertEveryoneHolds(["n1:v2"], a, b)
    }

    /// The same race after a restore from an older copy: both groups list the
    /// restored remote (n1 = v1); b, which holds v2, uploads it on top first;
    /// a, which acknowledged v3 and edited n1 again since, meets v2 as a
    /// conflict and keeps its edit.
    func testARestoredRemote_listedByBothGroupsBeforeEitherUploads_keepsTheNewerEdit() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'v1')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        let copy = memoryServer.snapshot()
        try await a.write { db in try db.execute(sql: "UPDATE note SET body = 'v2' WHERE id = 'n1'") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await a.write { db in try db.execute(sql: "UPDATE note SET body = 'v3' WHERE id = 'n1'") }
        try await sync("a", tables: ["note"])
        memoryServer.restore(copy)
        try await a.write { db in try db.execute(sql: "UPDATE note SET body = 'v4' WHERE id = 'n1'") }
        let bSynced = BeforeUpload()
        let bSync = CloudSync(try configuration("b", tables: ["note"]))
        let hooked = HookedRemote(remote()) {
            try await bSynced.run {
                let summary = try await bSync.syncOnce()
                XCTAssertNil(summary.error, "b's sync slipped in failed")
            }
        }
        try await sync("a", tables: ["note"], remote: hooked)
        XCTAssertTrue(bSynced.ran, "b synced between a's listing and a's upload")
        try await sync("b", tables: ["note"])
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await assertEveryoneHolds(["n1:v4"], a, b)
    }
}

/// Runs a body once (the first time it is asked to).
private final class BeforeUpload: Sendable {
    private let done = Mutex(false)
    var ran: Bool { done.withLock { $0 } }
    func run(_ body: @Sendable () async throws -> Void) async throws {
        guard done.withLock({ was in defer { was = true }; return !was }) else { return }
        try await body()
    }
}

/// A remote that runs `beforeModify` before every upload it is given, then
/// passes everything to `inner` (a second group's sync slipped in between a
/// group's fetch and its upload).
private struct HookedRemote: CloudDatabase {
    let inner: MemoryRemote
    let beforeModify: @Sendable () async throws -> Void
    init(_ inner: MemoryRemote, beforeModify: @escaping @Sendable () async throws -> Void) {
        self.inner = inner
        self.beforeModify = beforeModify
    }
    var displayName: String { inner.displayName }
    func run() async throws { try await inner.run() }
    func account() async throws -> String { try await inner.account() }
    func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory { try await inner.history(keeping: mark) }
    func prepare(_ types: [CloudRecordType]) async throws { try await inner.prepare(types) }
    func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
        try await beforeModify()
        return try await inner.modify(changes)
    }
    func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
        try await inner.fetchChanges(in: zone, since: token, limit: limit)
    }
    func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> { try await inner.forgotten(records) }
    func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await inner.missingAssets(hashes) }
    func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws { try await inner.uploadAsset(asset, bytes: bytes) }
    func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] { try await inner.downloadAsset(asset) }
    func share(_ zone: String, with user: String, access: CloudShareAccess?) async throws {
        try await inner.share(zone, with: user, access: access)
    }
    func shares() async throws -> [CloudShare] { try await inner.shares() }
    func pushHints() -> AsyncStream<Void> { inner.pushHints() }
}
