import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import Subprocesses
import Synchronization
import XCTest

/// A download of several pages, each applied in a transaction of its own,
/// with local writes committed between two pages. Each apply looks for
/// others' changes after what the pages before it wrote only (they are the
/// bridge's own: ``EngineState/ownThrough``), so a member's transaction or
/// an outside writer's change committed between pages must still be found,
/// and meet the fetched record as a local edit.
final class DownloadPagesTests: CloudTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"
    /// Three pages of ``SyncEngine/fetchPageSize`` (400).
    static let count = 1_200

    func testLocalWritesBetweenTwoPagesOfADownload_meetTheFetchedRecordsAsEdits() async throws {
        let a = try open("a", schema: Self.schema)
        try await a.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO note VALUES (?, ?)")
            for index in 0..<Self.count { try statement.execute(arguments: [String(format: "r%04d", index), "from a"]) }
        }
        try await sync("a", tables: ["note"])

        let b = try open("b", schema: Self.schema)
        let fetches = FetchCount()
        let database = group("b") + "/store.sqlite"
        // Before the listing's third page: pages one and two are applied, both the bridge's own.
        let hooked = FetchHookedRemote(base: remote()) {
            guard fetches.next() == 3 else { return }
            // A member's transaction, and an outside writer's change that no member has closed yet.
            try await b.write { db in try db.execute(sql: "INSERT INTO note VALUES ('r1198', 'b''s member')") }
            let shell = try Subprocess(
                URL(fileURLWithPath: "/usr/bin/sqlite3"),
                ["-bail", "-cmd", ".timeout 10000", database, "INSERT INTO note VALUES ('r1199', 'b''s shell')"])
            XCTAssertEqual(shell.waitForExit(timeout: 60), 0, "sqlite3: \(shell.errors)")
        }
        let summary = try await sync("b", tables: ["note"], policy: .clientWins, remote: hooked)
        XCTAssertGreaterThanOrEqual(fetches.next() - 1, 3, "the download took three pages")
        XCTAssertEqual(summary.conflicts, 2, "both local rows met their fetched records as conflicts")
        let kept = try texts(b, "SELECT id || ':' || body FROM note WHERE id >= 'r1198' ORDER BY id")
        XCTAssertEqual(kept, ["r1198:b's member", "r1199:b's shell"], "client-wins keeps b's rows")
        XCTAssertEqual(try texts(b, "SELECT count(*) FROM note"), ["\(Self.count)"])

        try await sync("b", tables: ["note"], policy: .clientWins)
        try await sync("a", tables: ["note"])
        let fromB = try texts(a, "SELECT id || ':' || body FROM note WHERE id >= 'r1198' ORDER BY id")
        XCTAssertEqual(fromB, ["r1198:b's member", "r1199:b's shell"], "b's rows went up")
    }

    /// The rows `sql` selects in `store`, as text.
    private func texts(_ store: GroupStore, _ sql: String) throws -> [String] {
        try store.pool.read { db in try String.fetchAll(db, sql: sql) }
    }
}

/// Counts the fetches a hook saw.
private final class FetchCount: Sendable {
    private let count = Mutex(0)
    /// The count, after adding one.
    func next() -> Int {
        count.withLock {
            $0 += 1; return $0
        }
    }
}

/// Runs `beforeFetch` before each fetch it forwards.
private struct FetchHookedRemote: ForwardingRemote {
    let base: any CloudDatabase
    let beforeFetch: @Sendable () async throws -> Void
    func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
        try await beforeFetch()
        return try await base.fetchChanges(in: zone, since: token, limit: limit)
    }
}
