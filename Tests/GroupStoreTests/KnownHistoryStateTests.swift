import Foundation
import GRDB
import GroupStore
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
        for key in Int64(1)...41 {  // ends with a library write, which seals the one before it
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
        try reader.start()
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (1)") }
        try await writer.pool.write { db in try db.execute(sql: "CREATE TABLE u(id INTEGER PRIMARY KEY)") }
        try await writer.write { db in try db.execute(sql: "INSERT INTO u(id) VALUES (7)") }
        // The pool's schema change is a transaction of its own, then the
        // write's row is the writer's.
        let received = try await first(3, of: saves)
        XCTAssertEqual(received.map(\.author), ["writer", Save.externalAuthor, "writer"])
        XCTAssertEqual(received[2].change(of: "u")?.inserted, [7])
    }
}
