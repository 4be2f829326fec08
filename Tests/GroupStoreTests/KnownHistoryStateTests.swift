import Foundation
import GRDB
import GroupStore
import Synchronization
import XCTest

/// A write skips reading the history's state when this process's previous
/// write left it and nothing changed the database since: whatever else
/// commits in between (another connection, the pool directly, a handler run
/// after the commit) is still sealed as a transaction of its own.
final class KnownHistoryStateTests: StoreTestCase {
    private func makeTable(_ writer: GroupStore) async throws {
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
    }

    /// Each transaction after `seq`, oldest first: its author and the keys
    /// of `t` it inserted, read from the history.
    private func history(_ store: GroupStore, after seq: Int64) async throws -> [(author: String, keys: [Int64])] {
        try await store.pool.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, op, key FROM groupstore_change WHERE id > ? AND op IN (1, 6) ORDER BY id", arguments: [seq])
            var transactions: [(author: String, keys: [Int64])] = []
            var keys: [Int64] = []
            for row in rows {
                if row["op"] as Int64 == 6 {
                    transactions.append((row["key"] as String? ?? Save.externalAuthor, keys))
                    keys = []
                } else {
                    keys.append(row["key"])
                }
            }
            return transactions
        }
    }

    func testRowWrittenByACommitHandler_isSealedApartByTheNextWrite() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let start = try await writeSeq(writer, "INSERT INTO t(id) VALUES (1)")
        // A handler that writes once the write committed: the row is the
        // connection's, but comes after the write's seal.
        try await writer.write { db in
            try db.execute(sql: "INSERT INTO t(id) VALUES (2)")
            db.afterNextTransaction(onCommit: { db in try? db.execute(sql: "INSERT INTO t(id) VALUES (3)") })
        }
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (4)") }
        let transactions = try await history(writer, after: start)
        XCTAssertEqual(transactions.map(\.author), ["writer", Save.externalAuthor, "writer"])
        XCTAssertEqual(transactions.map(\.keys), [[2], [3], [4]])
    }

    func testWriteAfterARolledBackWrite_recordsOnlyItsOwnRows() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let start = try await writeSeq(writer, "INSERT INTO t(id) VALUES (1)")
        struct Refused: Error {}
        do {
            try await writer.write { db in
                try db.execute(sql: "INSERT INTO t(id) VALUES (2)")
                throw Refused()
            }
            XCTFail("the write should have thrown")
        } catch is Refused {}
        let seq = try await writeSeq(writer, "INSERT INTO t(id) VALUES (3)")
        XCTAssertGreaterThan(seq, start)
        let transactions = try await history(writer, after: start)
        XCTAssertEqual(transactions.map(\.author), ["writer"])
        XCTAssertEqual(transactions.map(\.keys), [[3]])
    }

    func testWritesInterleavedWithOtherConnections_areEachSealedApart_andPayloadsListTheirOwnRows() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let start = try await writeSeq(writer, "INSERT INTO t(id) VALUES (0)")
        let outside = try DatabaseQueue(path: group + "/store.sqlite")
        defer { try? outside.close() }
        var expected: [(author: String, keys: [Int64])] = []
        var ownSeqs: [Int64: Int64] = [:]
        // Ends with a library write right after a write through the pool
        // (which it seals first): its payload, the newest, is never skipped.
        for key in Int64(1)...39 {
            switch key % 5 {
            case 0:
                // Another connection, as another process would.
                try await outside.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (?)", arguments: [key]) }
                expected.append((Save.externalAuthor, [key]))
            case 3:
                // The store's own pool, outside the library's writes.
                try await writer.pool.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (?)", arguments: [key]) }
                expected.append((Save.externalAuthor, [key]))
            default:
                ownSeqs[key] = try await writeSeq(writer, "INSERT INTO t(id) VALUES (?)", arguments: [key])
                expected.append(("writer", [key]))
            }
        }
        let transactions = try await history(writer, after: start)
        XCTAssertEqual(transactions.map(\.author), expected.map(\.author))
        XCTAssertEqual(transactions.map(\.keys), expected.map(\.keys))
        // The newest payload is always published: it lists its own write's
        // row only, not the pool's write just before it.
        await writer.flushPublications()
        let seq = try XCTUnwrap(ownSeqs[39])
        let data = try XCTUnwrap(FileManager.default.contents(atPath: group + "/members/writer/" + String(format: "%020lld.v2.json", seq)))
        let payload = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let changes = try XCTUnwrap(payload["changes"] as? [[String: Any]])
        XCTAssertEqual(changes.count, 1, "\(changes)")
        XCTAssertEqual(changes.first?["inserted"] as? [Int64], [39], "payload of seq \(seq)")
    }

    func testTableCreatedThroughThePoolBetweenWrites_isTrackedByTheNextWrite() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (1)") }
        try await writer.pool.write { db in try db.execute(sql: "CREATE TABLE u(id INTEGER PRIMARY KEY)") }
        try await writer.write { db in try db.execute(sql: "INSERT INTO u(id) VALUES (7)") }
        // The pool's schema change is a transaction of its own, then the
        // write's row is the writer's.
        let received = try await first(3, of: saves)
        XCTAssertEqual(received.map(\.author), ["writer", Save.externalAuthor, "writer"])
        XCTAssertEqual(received[2].change(of: "u")?.inserted, [7])
    }

    /// SQL run on the store's writer connection, from now on.
    private final class StatementLog: Sendable {
        let lines = Mutex<[String]>([])

        init(_ store: GroupStore) async throws {
            try await store.pool.writeWithoutTransaction { [self] db in
                db.trace { event in self.lines.withLock { $0.append(event.description) } }
            }
        }

        /// The statements logged, cleared.
        func take() -> [String] {
            lines.withLock { lines in
                defer { lines = [] }; return lines
            }
        }
    }

    /// Whether a write read the history's state before the app's statement
    /// (`marker`), in the statements it ran.
    private func readTheStateFirst(_ statements: [String], before marker: String) throws -> Bool {
        let app = try XCTUnwrap(statements.firstIndex { $0.contains(marker) }, "\(statements)")
        return statements[..<app].contains { $0.contains("schema_version") || $0.contains("registry_version") }
    }

    func testSecondOfTwoWrites_skipsTheStateRead_butNotAfterAnotherConnectionCommitted() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let log = try await StatementLog(writer)
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (1)") }
        _ = log.take()
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (2)") }
        XCTAssertFalse(try readTheStateFirst(log.take(), before: "VALUES (2)"), "nothing committed since the write before")
        let outside = try DatabaseQueue(path: group + "/store.sqlite")
        try await outside.write { db in try db.execute(sql: "CREATE TABLE other(x)") }
        try outside.close()
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (3)") }
        XCTAssertTrue(try readTheStateFirst(log.take(), before: "VALUES (3)"), "another connection committed")
    }

    func testWritesOfTwoMembersInTurn_eachPayloadListsItsOwnRows() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let other = try open("other")
        let start = try await writeSeq(writer, "INSERT INTO t(id) VALUES (1)")
        try await writeSeq(other, "INSERT INTO t(id) VALUES (2)")
        let seq = try await writeSeq(writer, "INSERT INTO t(id) VALUES (3)")
        let transactions = try await history(writer, after: start)
        XCTAssertEqual(transactions.map(\.author), ["other", "writer"])
        XCTAssertEqual(transactions.map(\.keys), [[2], [3]])
        await writer.flushPublications()
        let text = try String(contentsOfFile: group + "/members/writer/" + String(format: "%020lld.v2.json", seq), encoding: .utf8)
        XCTAssertTrue(text.contains(#""inserted":[3]"#), text)
    }

    func testOutsideCommitClosedByTheWritersOwnMerger_thenAWrite_staysATransactionOfItsOwn() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let saves = writer.saves()
        try await writer.start()
        let start = try await writeSeq(writer, "INSERT INTO t(id) VALUES (1)")
        let outside = try DatabaseQueue(path: group + "/store.sqlite")
        try await outside.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (2)") }
        try outside.close()
        // The writer's merger reads (and closes) it on the writer connection.
        let external = try await first(1, of: saves)[0]
        XCTAssertEqual(external.change(of: "t")?.inserted, [2])
        try await writeSeq(writer, "INSERT INTO t(id) VALUES (3)")
        let transactions = try await history(writer, after: start)
        XCTAssertEqual(transactions.map(\.author), [Save.externalAuthor, "writer"])
        XCTAssertEqual(transactions.map(\.keys), [[2], [3]])
    }

    func testPayloadAtTheRowLimit_listsEveryKey_andOneRowMore_isTruncated() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        func payload(rows: Int, from first: Int) async throws -> String {
            let seq = try await writeSeq(
                writer, "WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO t SELECT i FROM n",
                arguments: [first, first + rows - 1])
            await writer.flushPublications()
            return try String(contentsOfFile: group + "/members/writer/" + String(format: "%020lld.v2.json", seq), encoding: .utf8)
        }
        let atLimit = try await payload(rows: 10_000, from: 1)
        XCTAssertTrue(atLimit.contains(#""truncated":false"#))
        XCTAssertTrue(atLimit.contains(#""inserted":[1,2,3,"#) && atLimit.contains(#",9999,10000]"#))
        let past = try await payload(rows: 10_001, from: 20_001)
        XCTAssertTrue(past.contains(#""truncated":true"#))
        XCTAssertTrue(past.contains(#""changes":[]"#))
    }
}
