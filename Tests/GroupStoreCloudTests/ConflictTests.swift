import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import Subprocesses
import Synchronization
import XCTest

/// Each policy on constructed conflicts, with the result checked in both groups.
class ConflictTests: CloudTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT, body TEXT)"

    /// Both groups hold note n1 ('t0', 'b0'); then `editA` runs in A and is
    /// synced, `editB` runs in B (before B syncs), and B, A, B sync. Returns
    /// the rows of A and B (they must agree).
    private func conflict(
        _ policy: CloudConflictPolicy, a editA: String, b editB: String, bFetchesLate: Bool = false,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> [String] {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 't0', 'b0')") }
        try await sync("a", tables: ["note"], policy: policy)
        try await sync("b", tables: ["note"], policy: policy)
        try await a.write { db in try db.execute(sql: editA) }
        try await b.write { db in try db.execute(sql: editB) }
        try await sync("a", tables: ["note"], policy: policy)
        // With bFetchesLate, B's first fetch sees nothing new: the conflict shows at upload (a stale tag).
        let remoteB: any CloudDatabase = bFetchesLate ? LaggingRemote(try defaultRemote()) : try defaultRemote()
        let summary = try await sync("b", tables: ["note"], policy: policy, remote: remoteB)
        XCTAssertEqual(summary.conflicts, 1, "B meets one conflict", file: file, line: line)
        try await sync("a", tables: ["note"], policy: policy)
        try await sync("b", tables: ["note"], policy: policy)
        let rowsA = try dump(a, "note")
        XCTAssertEqual(rowsA, try dump(b, "note"), "both groups agree", file: file, line: line)
        return rowsA
    }

    private func expect(
        _ expected: [String], _ policy: CloudConflictPolicy, a editA: String, b editB: String, bFetchesLate: Bool = false,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let rows = try await conflict(policy, a: editA, b: editB, bFetchesLate: bFetchesLate, file: file, line: line)
        XCTAssertEqual(rows, expected, "\(policy)", file: file, line: line)
    }

    private let sameField = ("UPDATE note SET title = 'from A'", "UPDATE note SET title = 'from B'")
    private let otherFields = ("UPDATE note SET title = 'from A'", "UPDATE note SET body = 'from B'")

    func testServerWins_sameField_andDifferentFields() async throws {
        try await expect(["t:n1|t:from A|t:b0"], .serverWins, a: sameField.0, b: sameField.1)
    }

    func testServerWins_differentFields_keepsTheServerRecord() async throws {
        try await expect(["t:n1|t:from A|t:b0"], .serverWins, a: otherFields.0, b: otherFields.1)
    }

    func testClientWins_sameField() async throws {
        try await expect(["t:n1|t:from B|t:b0"], .clientWins, a: sameField.0, b: sameField.1)
    }

    func testClientWins_atUpload_whenTheFetchLagged() async throws {
        try await expect(["t:n1|t:from B|t:b0"], .clientWins, a: sameField.0, b: sameField.1, bFetchesLate: true)
    }

    func testServerWins_atUpload_whenTheFetchLagged() async throws {
        try await expect(["t:n1|t:from A|t:b0"], .serverWins, a: sameField.0, b: sameField.1, bFetchesLate: true)
    }

    /// A local edit committed while the bridge waits for the remote's answer
    /// (after the sync began, before the fetched change is applied) is met
    /// as a conflict, not overwritten: its save has not reached the bridge
    /// when the apply runs (a one-shot sync reads the history at its start
    /// only), so the apply finds it by value (`RecordApplier.localEdit`).
    func testALocalEditCommittedJustBeforeTheApply_isAConflict_clientWins() async throws {
        let b = try open("b", schema: Self.schema)
        try await editDuringFetch(b, .clientWins, expect: ["t:n1|t:from B|t:b0"]) {
            try await b.write { db in try db.execute(sql: "UPDATE note SET title = 'from B'") }
        }
    }

    /// The same with field-merge: A's edit of `body` and B's edit of
    /// `title`, made just before B's apply, both survive.
    func testALocalEditCommittedJustBeforeTheApply_isMerged_fieldMerge() async throws {
        let b = try open("b", schema: Self.schema)
        try await editDuringFetch(b, .fieldMerge, editA: "UPDATE note SET body = 'from A'", expect: ["t:n1|t:from B|t:from A"]) {
            try await b.write { db in try db.execute(sql: "UPDATE note SET title = 'from B'") }
        }
    }

    /// The same with a running bridge, whose member's saves stream delivers
    /// the edit's save around the apply (before or after it: either way the
    /// edit is kept).
    func testALocalEditCommittedJustBeforeTheApplyOfARunningBridge_isKept() async throws {
        let b = try open("b", schema: Self.schema)
        try await editDuringFetch(
            b, .fieldMerge, editA: "UPDATE note SET body = 'from A'", expect: ["t:n1|t:from B|t:from A"], running: true
        ) {
            try await b.write { db in try db.execute(sql: "UPDATE note SET title = 'from B'") }
        }
    }

    /// The same with the `sqlite3` shell as the writer: its change, not yet
    /// closed into a transaction of the history, is found by value too.
    func testAShellEditCommittedDuringTheFetch_isAConflict_notOverwritten() async throws {
        let b = try open("b", schema: Self.schema)
        let database = group("b") + "/store.sqlite"
        try await editDuringFetch(b, .clientWins, expect: ["t:n1|t:from the shell|t:b0"]) {
            let process = try Subprocess(
                URL(fileURLWithPath: "/usr/bin/sqlite3"),
                ["-bail", "-cmd", ".timeout 10000", database, "UPDATE note SET title = 'from the shell'"])
            XCTAssertEqual(process.waitForExit(timeout: 60), 0, "sqlite3 failed: \(process.errors)")
        }
    }

    /// Both groups hold n1; A runs `editA` and syncs; B's sync (one-shot, or
    /// a running bridge) runs `edit` while its fetch is answered. B must
    /// meet one conflict and end with `expect`, which then reaches A too.
    private func editDuringFetch(
        _ b: GroupStore, _ policy: CloudConflictPolicy, editA: String = "UPDATE note SET title = 'from A'", expect: [String],
        running: Bool = false, file: StaticString = #filePath, line: UInt = #line, _ edit: @escaping @Sendable () async throws -> Void
    ) async throws {
        let a = try open("a", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 't0', 'b0')") }
        try await sync("a", tables: ["note"], policy: policy)
        try await sync("b", tables: ["note"], policy: policy)
        try await a.write { db in try db.execute(sql: editA) }
        try await sync("a", tables: ["note"], policy: policy)
        let remoteB = EditDuringFetchRemote(try defaultRemote(), edit: edit)
        if running {
            let bridge = CloudSync(try configuration("b", tables: ["note"], policy: policy, remote: remoteB))
            let events = bridge.events()
            let run = Task { try await bridge.run() }
            defer { run.cancel() }
            let conflicts = try await deadline(30, "B's bridge to settle the conflict and upload its result") {
                var conflicts = 0
                for await event in events {
                    if case .conflict = event { conflicts += 1 }
                    if case .finished(let summary) = event, summary.error == nil, conflicts > 0, summary.pending == 0 { return conflicts }
                }
                return nil
            }
            XCTAssertEqual(conflicts, 1, "the fetched change meets B's edit as a conflict", file: file, line: line)
        } else {
            let summary = try await sync("b", tables: ["note"], policy: policy, remote: remoteB)
            XCTAssertEqual(summary.conflicts, 1, "the fetched change meets B's edit as a conflict", file: file, line: line)
            try await sync("b", tables: ["note"], policy: policy)
        }
        XCTAssertTrue(remoteB.edited, "the edit ran during B's fetch", file: file, line: line)
        XCTAssertEqual(try dump(b, "note"), expect, "\(policy): B's edit stays", file: file, line: line)
        try await sync("a", tables: ["note"], policy: policy)
        XCTAssertEqual(try dump(a, "note"), expect, "and reaches A", file: file, line: line)
    }

    func testNewerWins_theLaterEditWins_eitherWay() async throws {
        // B edits after A: B's is newer.
        try await expect(["t:n1|t:from B|t:b0"], .newerWins, a: sameField.0, b: sameField.1)
    }

    func testNewerWins_anOlderLocalEditLoses() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 't0', 'b0')") }
        try await sync("a", tables: ["note"], policy: .newerWins)
        try await sync("b", tables: ["note"], policy: .newerWins)
        // B edits first, A later; A syncs first: at B's sync the server's edit is the newer one.
        try await b.write { db in try db.execute(sql: "UPDATE note SET title = 'older B'") }
        try await Task.sleep(for: .milliseconds(20))  // distinct commit times, not synchronisation
        try await a.write { db in try db.execute(sql: "UPDATE note SET title = 'newer A'") }
        try await sync("a", tables: ["note"], policy: .newerWins)
        try await sync("b", tables: ["note"], policy: .newerWins)
        try await sync("a", tables: ["note"], policy: .newerWins)
        XCTAssertEqual(try dump(b, "note"), ["t:n1|t:newer A|t:b0"])
        XCTAssertEqual(try dump(a, "note"), ["t:n1|t:newer A|t:b0"])
    }

    func testFieldMerge_editsToDifferentFieldsBothSurvive() async throws {
        try await expect(["t:n1|t:from A|t:from B"], .fieldMerge, a: otherFields.0, b: otherFields.1)
    }

    func testFieldMerge_sameFieldTakesTheServers() async throws {
        try await expect(["t:n1|t:from A|t:b0"], .fieldMerge, a: sameField.0, b: sameField.1)
    }

    func testCallerDecides_withServerClientAndAncestor() async throws {
        let policy = CloudConflictPolicy.custom { conflict in
            guard case .text(let server)? = conflict.server?["title"], case .text(let client)? = conflict.client?["title"],
                case .text(let ancestor)? = conflict.ancestor?["title"]
            else { return .server }
            var merged = conflict.client ?? [:]
            merged["title"] = .text("\(ancestor)→\(server)+\(client)")
            return .fields(merged)
        }
        try await expect(["t:n1|t:t0→from A+from B|t:b0"], policy, a: sameField.0, b: sameField.1)
    }

    // Delete against edit.

    func testDeleteAgainstEdit_serverWins_deletes() async throws {
        try await expect([], .serverWins, a: "DELETE FROM note", b: sameField.1)
    }

    func testDeleteAgainstEdit_clientWins_keepsTheEdit() async throws {
        try await expect(["t:n1|t:from B|t:b0"], .clientWins, a: "DELETE FROM note", b: sameField.1)
    }

    func testDeleteAgainstEdit_newerWins_keepsTheEdit() async throws {
        try await expect(["t:n1|t:from B|t:b0"], .newerWins, a: "DELETE FROM note", b: sameField.1)
    }

    func testDeleteAgainstEdit_fieldMerge_keepsTheEdit() async throws {
        try await expect(["t:n1|t:from B|t:b0"], .fieldMerge, a: "DELETE FROM note", b: sameField.1)
    }

    func testEditAgainstDelete_serverWins_bringsTheRowBack() async throws {
        try await expect(["t:n1|t:from A|t:b0"], .serverWins, a: sameField.0, b: "DELETE FROM note")
    }

    func testEditAgainstDelete_clientWins_deletesEverywhere() async throws {
        try await expect([], .clientWins, a: sameField.0, b: "DELETE FROM note")
    }

    func testAConflictThatNeverSettles_isParkedAfterTheBound_andReported() async throws {
        // The fault (a conflict at every save) is the embedded remote's.
        let a = try open("a", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 't0', 'b0')") }
        try await sync("a", tables: ["note"], remote: remote())
        try await a.write { db in try db.execute(sql: "UPDATE note SET title = 'mine'") }
        let faults = RemoteFaults()
        faults.conflictOnEverySave = true
        let sync = CloudSync(try configuration("a", tables: ["note"], policy: .clientWins, remote: remote(faults: faults)))
        let events = sync.events()
        let summary = try await sync.syncOnce()
        XCTAssertEqual(summary.parked, 1)
        XCTAssertNil(summary.error)
        var parked: [String] = []
        var conflicts = 0
        for await event in events {
            if case .parked(let table, let record, let reason) = event { parked.append("\(table)/\(record): \(reason)") }
            if case .conflict = event { conflicts += 1 }
            if case .finished = event { break }
        }
        XCTAssertEqual(parked.count, 1, "\(parked)")
        XCTAssertTrue(parked.first?.contains("did not settle") ?? false, "\(parked)")
        XCTAssertEqual(conflicts, 5, "the bound: 5 rounds")
        // Nothing lost: the local edit is still there, and reported as parked.
        XCTAssertEqual(try dump(a, "note"), ["t:n1|t:mine|t:b0"])
        let status = try CloudSyncStatus.read(group: group("a"))
        XCTAssertEqual(status.parked, 1)
        XCTAssertEqual(status.parkedRecords.first?.record, "n1")
        // A complete resync retries it; with the fault gone it settles.
        faults.conflictOnEverySave = false
        let retry = try await self.sync("a", tables: ["note"], policy: .clientWins, complete: true)
        XCTAssertEqual(retry.parked, 0)
        XCTAssertEqual(try CloudSyncStatus.read(group: group("a")).parked, 0)
        XCTAssertEqual(try CloudSyncStatus.read(group: group("a")).pending, 0)
    }
}

/// A remote whose first fetch of each zone reports nothing new (as if the
/// change arrived after it), so a conflict shows up at upload time.
final class LaggingRemote: ForwardingRemote {
    let base: any CloudDatabase
    private let lagged = Mutex<Set<CloudZone>>([])
    init(_ base: any CloudDatabase) { self.base = base }
    func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
        let first = lagged.withLock { $0.insert(zone).inserted }
        if first, let token { return CloudChangeBatch(changed: [], deleted: [], token: token, moreComing: false) }
        return try await base.fetchChanges(in: zone, since: token, limit: limit)
    }
}

/// A remote that, at the first fetch that brings changes, runs `edit` after
/// the real remote answered and before the bridge applies the answer.
private final class EditDuringFetchRemote: ForwardingRemote, Sendable {
    let base: any CloudDatabase
    private let edit: @Sendable () async throws -> Void
    private let done = Mutex(false)
    var edited: Bool { done.withLock { $0 } }
    init(_ base: any CloudDatabase, edit: @escaping @Sendable () async throws -> Void) {
        self.base = base
        self.edit = edit
    }
    func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
        let batch = try await base.fetchChanges(in: zone, since: token, limit: limit)
        if !batch.changed.isEmpty,
            done.withLock({ value in
                defer { value = true }; return !value
            })
        {
            try await edit()
        }
        return batch
    }
}
