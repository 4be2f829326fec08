import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import XCTest

/// Writes made while the bridge was down, history pruned past it, expired
/// change tokens, transient failures and batch limits.
final class RecoveryTests: CloudTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)"

    func testShellWriteWhileTheBridgeIsDown_isUploadedWhenItComesBack() async throws {
        _ = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await sync("a", tables: ["note"])
        try shell("a", "INSERT INTO note VALUES ('n1', 'from the shell'); INSERT INTO note VALUES ('n2', 'too')")
        try shell("a", "UPDATE note SET title = 'edited by the shell' WHERE id = 'n2'")
        let summary = try await sync("a", tables: ["note"])
        XCTAssertEqual(summary.uploaded, 2)
        try await sync("b", tables: ["note"])
        XCTAssertEqual(try dump(b, "note"), ["t:n1|t:from the shell", "t:n2|t:edited by the shell"])
    }

    func testRowsWrittenBeforeSyncWasTurnedOn_areUploaded() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('old', 'before sync')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        XCTAssertEqual(try dump(b, "note"), ["t:old|t:before sync"])
    }

    func testHistoryPrunedPastTheBridge_isDiffed_notLost() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'one'), ('n2', 'two'), ('n3', 'three')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await a.write { db in try db.execute(sql: "UPDATE note SET title = 'ONE' WHERE id = 'n1'") }
        try await a.write { db in try db.execute(sql: "DELETE FROM note WHERE id = 'n2'") }
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n4', 'four')") }
        // Everything is pruned, whatever the members' cursors (retention 0).
        let report = try GroupInspector(directory: group("a")).prune(retention: 0, now: Date().addingTimeInterval(60))
        XCTAssertGreaterThan(report.prunedThrough, 0)
        let summary = try await sync("a", tables: ["note"])
        XCTAssertEqual(summary.uploaded, 3)
        try await sync("b", tables: ["note"])
        XCTAssertEqual(try dump(b, "note"), ["t:n1|t:ONE", "t:n3|t:three", "t:n4|t:four"])
    }

    func testExpiredToken_refetchesTheZone_keepsPendingEdits_andSeesDeletes() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'one'), ('n2', 'two'), ('n3', 'three')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await a.write { db in try db.execute(sql: "UPDATE note SET title = 'ONE' WHERE id = 'n1'; DELETE FROM note WHERE id = 'n2'") }
        try await sync("a", tables: ["note"])
        try await b.write { db in
            try db.execute(sql: "INSERT INTO note VALUES ('b1', 'made in B'); UPDATE note SET title = 'THREE' WHERE id = 'n3'")
        }
        // The remote forgets what changed (its log compacted past B's token).
        memoryServer.compactLog(keepingLast: 0)
        let summary = try await sync("b", tables: ["note"])
        XCTAssertEqual(summary.uploaded, 2, "B's pending edits are kept and uploaded")
        XCTAssertEqual(try dump(b, "note"), ["t:b1|t:made in B", "t:n1|t:ONE", "t:n3|t:THREE"], "n2 was deleted remotely")
        try await sync("a", tables: ["note"])
        XCTAssertEqual(try dump(a, "note"), try dump(b, "note"))
    }

    func testTokenExpiredByTheRemote_onceAsAFault_isRecovered() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'one')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n2', 'two')") }
        try await sync("a", tables: ["note"])
        let faults = RemoteFaults()
        faults.expireTokensOnce()
        try await sync("b", tables: ["note"], remote: remote(faults: faults))
        XCTAssertEqual(try dump(b, "note"), try dump(a, "note"))
    }

    func testTransientErrorsAndRateLimits_areRetried() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'one')") }
        let faults = RemoteFaults()
        faults.failNext(3)
        faults.rateLimitNext(2, retryAfter: 0.05)
        let summary = try await sync("a", tables: ["note"], remote: remote(faults: faults))
        XCTAssertEqual(summary.uploaded, 1)
        try await sync("b", tables: ["note"])
        XCTAssertEqual(try dump(b, "note"), try dump(a, "note"))
    }

    func testABatchTooLargeForTheRemote_isSplit() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in
            for index in 0..<250 { try db.execute(sql: "INSERT INTO note VALUES (?, ?)", arguments: ["n\(index)", "title \(index)"]) }
        }
        let faults = RemoteFaults()
        faults.maxBatchRecords = 40
        let summary = try await sync("a", tables: ["note"], remote: remote(faults: faults))
        XCTAssertEqual(summary.uploaded, 250)
        try await sync("b", tables: ["note"])
        XCTAssertEqual(try dump(b, "note").count, 250)
    }
}
