import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import XCTest

/// The syncing member dies after the remote took its upload and before it
/// recorded the answer; the member that takes over must know that version as
/// its own, not as a conflict (found by the kill trials: server-wins then
/// restored the older version over a newer local edit).
final class TakeOverTests: CloudTestCase {
    static let schema = "CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER, note TEXT)"

    /// Uploads through `base`, then fails as a dead process would: the answer never arrives.
    final class DiesAfterUpload: ForwardingRemote {
        let base: any CloudDatabase
        init(_ base: any CloudDatabase) { self.base = base }
        func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
            _ = try await base.modify(changes)
            throw CloudSyncError(.badRemote, "the member died before the answer arrived")
        }
    }

    private func scenario(
        policy: CloudConflictPolicy, lateFetch: Bool, second: String, third: String, expect: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO item VALUES ('k1', 1, 'v1')") }
        try await sync("a", tables: ["item"], policy: policy)
        try await a.write { db in try db.execute(sql: second) }
        let died = try await CloudSync(try configuration("a", tables: ["item"], policy: policy, remote: DiesAfterUpload(remote())))
            .syncOnce()
        XCTAssertNotNil(died.error, file: file, line: line)
        try await a.write { db in try db.execute(sql: third) }
        // The member that takes over (a new engine on the same state).
        let remote: any CloudDatabase = lateFetch ? LaggingRemote(remote()) : remote()
        let takeover = try await sync("a", tables: ["item"], policy: policy, remote: remote)
        XCTAssertEqual(takeover.conflicts, 0, "its own upload is not a conflict", file: file, line: line)
        try await sync("a", tables: ["item"], policy: policy)
        try await sync("b", tables: ["item"], policy: policy)
        XCTAssertEqual(try dump(a, "item"), expect, "the newest local edit stays", file: file, line: line)
        XCTAssertEqual(try dump(b, "item"), expect, "and reaches the other group", file: file, line: line)
        XCTAssertEqual(try CloudSyncStatus.read(group: group("a")).pending, 0, file: file, line: line)
    }

    func testUploadTakenThenMemberDied_aNewerEditIsNotLost() async throws {
        try await scenario(
            policy: .serverWins, lateFetch: false, second: "UPDATE item SET n = 2, note = 'v2'",
            third: "UPDATE item SET n = 3, note = 'v3'",
            expect: ["t:k1|i:3|t:v3"])
    }

    func testUploadTakenThenMemberDied_seenAtUploadWhenTheFetchLags() async throws {
        try await scenario(
            policy: .serverWins, lateFetch: true, second: "UPDATE item SET n = 2, note = 'v2'", third: "UPDATE item SET n = 3, note = 'v3'",
            expect: ["t:k1|i:3|t:v3"])
    }

    func testDeleteTakenThenMemberDied_aRowWrittenAgainIsNotLost() async throws {
        try await scenario(
            policy: .serverWins, lateFetch: false, second: "DELETE FROM item", third: "INSERT INTO item VALUES ('k1', 4, 'again')",
            expect: ["t:k1|i:4|t:again"])
    }

    func testUploadTakenThenMemberDied_nothingNewerLocally_settlesQuietly() async throws {
        try await scenario(
            policy: .clientWins, lateFetch: false, second: "UPDATE item SET n = 2, note = 'v2'", third: "SELECT 1",
            expect: ["t:k1|i:2|t:v2"])
    }
}
