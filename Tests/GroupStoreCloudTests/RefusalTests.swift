import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import XCTest

/// Tables that cannot be synced safely are refused when sync is configured,
/// each with a one-line message naming the table and the reason.
final class RefusalTests: CloudTestCase {
    private func refusal(
        _ schema: String, tables: [String], publicTables: [String] = [], file: StaticString = #filePath, line: UInt = #line
    ) async throws -> CloudSyncError? {
        _ = try open("a", schema: schema)
        do {
            _ = try await CloudSync(try configuration("a", tables: tables, publicTables: publicTables)).syncOnce()
            XCTFail("sync was not refused", file: file, line: line)
            return nil
        } catch let error as CloudSyncError {
            XCTAssertFalse(error.message.contains("\n"), "one line: \(error.message)", file: file, line: line)
            return error
        }
    }

    func testIntegerKeyedTable_isRefused() async throws {
        let error = try await refusal("CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT)", tables: ["item"])
        XCTAssertEqual(error?.code, .tableRefused)
        XCTAssertTrue(error?.message.contains("table item") ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("collide") ?? false, error?.message ?? "")
    }

    /// A sync refused before it ever synced leaves no member `cloud` behind
    /// to hold back pruning (a new user's first `cloud sync` of a wrong table).
    func testARefusedFirstSync_leavesNoMemberBehind() async throws {
        _ = try await refusal("CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT)", tables: ["item"])
        let members = try GroupInspector(directory: group("a")).status().members.map(\.name)
        XCTAssertFalse(members.contains("cloud"), "the refused bridge stayed a member: \(members)")
    }

    func testRowidTable_isRefused() async throws {
        let error = try await refusal("CREATE TABLE item(name TEXT)", tables: ["item"])
        XCTAssertEqual(error?.code, .tableRefused)
        XCTAssertTrue(error?.message.contains("no primary key") ?? false, error?.message ?? "")
    }

    func testReferenceToATableNotSynced_isRefused() async throws {
        let error = try await refusal(
            "CREATE TABLE author(id TEXT PRIMARY KEY); CREATE TABLE book(id TEXT PRIMARY KEY, author_id TEXT REFERENCES author(id))",
            tables: ["book"])
        XCTAssertEqual(error?.code, .tableRefused)
        XCTAssertTrue(error?.message.contains("references author, which is not synced") ?? false, error?.message ?? "")
    }

    func testCompositeKeyThatIsNotALinkTable_isRefused() async throws {
        let error = try await refusal("CREATE TABLE pair(a TEXT, b TEXT, PRIMARY KEY (a, b))", tables: ["pair"])
        XCTAssertEqual(error?.code, .tableRefused)
        XCTAssertTrue(error?.message.contains("composite key") ?? false, error?.message ?? "")
    }

    func testReservedColumnPrefix_isRefused() async throws {
        let error = try await refusal("CREATE TABLE note(id TEXT PRIMARY KEY, gs_zone TEXT)", tables: ["note"])
        XCTAssertEqual(error?.code, .tableRefused)
        XCTAssertTrue(error?.message.contains("gs_zone") ?? false, error?.message ?? "")
    }

    func testMissingTable_isRefused() async throws {
        let error = try await refusal("CREATE TABLE note(id TEXT PRIMARY KEY)", tables: ["nope"])
        XCTAssertEqual(error?.code, .tableRefused)
        XCTAssertTrue(error?.message.contains("nope does not exist") ?? false, error?.message ?? "")
    }

    func testPublicTableReferencingAPrivateOne_isRefused() async throws {
        let error = try await refusal(
            "CREATE TABLE author(id TEXT PRIMARY KEY); CREATE TABLE book(id TEXT PRIMARY KEY, author_id TEXT REFERENCES author(id))",
            tables: ["author"], publicTables: ["book"])
        XCTAssertEqual(error?.code, .tableRefused)
    }

    func testNoTablesOrATableTwice_isAConfigurationError() async throws {
        let none = try await refusal("CREATE TABLE note(id TEXT PRIMARY KEY)", tables: [])
        XCTAssertEqual(none?.code, .invalidConfiguration)
        try tearDownWithError()
        try setUpWithError()
        let twice = try await refusal("CREATE TABLE note(id TEXT PRIMARY KEY)", tables: ["note"], publicTables: ["NOTE"])
        XCTAssertEqual(twice?.code, .invalidConfiguration)
    }

    func testScopeChangeOfASyncedTable_isRefusedByTheRemote() async throws {
        _ = try open("a", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)")
        try await sync("a", tables: ["note"])
        let summary = try await CloudSync(try configuration("a", tables: [], publicTables: ["note"])).syncOnce()
        XCTAssertEqual(summary.errorCode, "scopeChanged", summary.error ?? "")
        XCTAssertTrue(summary.error?.contains("note") ?? false, summary.error ?? "")
    }

    func testPrivateRowsOfTwoUsers_neitherCollideNorShow() async throws {
        let a = try open("a", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)")
        let b = try open("b", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)")
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'alice''s')") }
        try await b.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'bob''s')") }
        try await sync("a", tables: ["note"], remote: remote(user: "alice"))
        try await sync("b", tables: ["note"], remote: remote(user: "bob"))
        try await sync("a", tables: ["note"], remote: remote(user: "alice"))
        XCTAssertEqual(try dump(a, "note"), ["t:n1|t:alice's"])
        XCTAssertEqual(try dump(b, "note"), ["t:n1|t:bob's"])
    }

    func testPublicTable_isReadByEveryone_writtenByItsCreator() async throws {
        let a = try open("a", schema: "CREATE TABLE board(id TEXT PRIMARY KEY, text TEXT)")
        let b = try open("b", schema: "CREATE TABLE board(id TEXT PRIMARY KEY, text TEXT)")
        try await a.write { db in try db.execute(sql: "INSERT INTO board VALUES ('p1', 'by alice')") }
        try await sync("a", tables: [], publicTables: ["board"], remote: remote(user: "alice"))
        try await sync("b", tables: [], publicTables: ["board"], remote: remote(user: "bob"))
        XCTAssertEqual(try dump(b, "board"), ["t:p1|t:by alice"])
        // Bob may not change Alice's record: parked and reported, his row kept.
        try await b.write { db in try db.execute(sql: "UPDATE board SET text = 'bob was here'") }
        let summary = try await sync("b", tables: [], publicTables: ["board"], remote: remote(user: "bob"))
        XCTAssertEqual(summary.parked, 1)
        try await sync("a", tables: [], publicTables: ["board"], remote: remote(user: "alice"))
        XCTAssertEqual(try dump(a, "board"), ["t:p1|t:by alice"])
    }

    func testAccountChange_isRefusedByDefault_nothingIsTouched() async throws {
        let a = try open("a", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)")
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'alice''s')") }
        try await sync("a", tables: ["note"], remote: remote(user: "alice"))
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n2', 'not uploaded yet')") }
        let summary = try await CloudSync(try configuration("a", tables: ["note"], remote: remote(user: "bob"))).syncOnce()
        XCTAssertEqual(summary.errorCode, "accountChanged")
        XCTAssertTrue(summary.error?.contains("alice") ?? false, summary.error ?? "")
        XCTAssertEqual(try dump(a, "note"), ["t:n1|t:alice's", "t:n2|t:not uploaded yet"])
        let again = try await sync("a", tables: ["note"], remote: remote(user: "alice"))
        XCTAssertEqual(again.uploaded, 1, "the edit made meanwhile still goes up for alice")
    }

    func testAccountChange_purge_whenAsked() async throws {
        let a = try open("a", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)")
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'alice''s')") }
        try await sync("a", tables: ["note"], remote: remote(user: "alice"))
        var bob = try configuration("a", tables: ["note"], remote: remote(user: "bob"))
        bob.accountChange = .purge
        _ = try await CloudSync(bob).syncOnce()
        XCTAssertEqual(try dump(a, "note"), [], "alice's rows are purged when bob signs in")
        var alice = try configuration("a", tables: ["note"], remote: remote(user: "alice"))
        alice.accountChange = .purge
        _ = try await CloudSync(alice).syncOnce()
        XCTAssertEqual(try dump(a, "note"), ["t:n1|t:alice's"], "and come back with alice")
    }

    func testAccountChange_uploadToTheNewAccount() async throws {
        let a = try open("a", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)")
        let b = try open("b", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)")
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'kept')") }
        try await sync("a", tables: ["note"], remote: remote(user: "alice"))
        var configuration = try configuration("a", tables: ["note"], remote: remote(user: "bob"))
        configuration.accountChange = .upload
        let summary = try await CloudSync(configuration).syncOnce()
        XCTAssertEqual(summary.uploaded, 1)
        try await sync("b", tables: ["note"], remote: remote(user: "bob"))
        XCTAssertEqual(try dump(b, "note"), ["t:n1|t:kept"])
    }
}
