import Foundation
import GRDB
import GroupStore
import XCTest

/// What the triggers record, read back as delivered saves.
final class HistoryTests: StoreTestCase {
    func testInsertUpdateDelete_areDeliveredWithTheirKeys() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT, score INT)") }
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()

        try await writer.write { db in
            try db.execute(sql: "INSERT INTO player(id, name, score) VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 0)")
        }
        try await writer.write { db in
            try db.execute(sql: "UPDATE player SET score = 10 WHERE id = 1; UPDATE player SET name = 'B', score = 5 WHERE id = 2")
            try db.execute(sql: "DELETE FROM player WHERE id = 3")
        }
        let received = try await first(2, of: saves)
        XCTAssertEqual(received[0].changes, [EntityChange(entity: "player", inserted: [1, 2, 3])])
        XCTAssertEqual(
            received[1].changes,
            [EntityChange(entity: "player", updated: [1, 2], deleted: [3])])
        XCTAssertEqual(received.map(\.author), ["writer", "writer"])
        XCTAssertLessThan(received[0].seq, received[1].seq)
    }

    func testChangesWithinOneTransaction_areFoldedLikeACoreDataSave() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v)") }
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(id, v) VALUES (10, 0), (11, 0)") }
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        try await writer.write { db in
            try db.execute(sql: "INSERT INTO t(id, v) VALUES (1, 0); UPDATE t SET v = 1 WHERE id = 1")  // inserted
            try db.execute(sql: "INSERT INTO t(id, v) VALUES (2, 0); DELETE FROM t WHERE id = 2")  // nothing
            try db.execute(sql: "DELETE FROM t WHERE id = 10; INSERT INTO t(id, v) VALUES (10, 5)")  // updated
        }
        let save = try await first(1, of: saves)[0]
        XCTAssertEqual(save.changes, [EntityChange(entity: "t", inserted: [1], updated: [10])])
    }

    func testTextCompositeAndRowidKeys_areDeliveredAsJSONScalarsAndArrays() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE tag(name TEXT PRIMARY KEY, n INT);
                    CREATE TABLE membership(team TEXT, player INT, PRIMARY KEY (team, player)) WITHOUT ROWID;
                    CREATE TABLE log(message TEXT);
                    """)
        }
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        try await writer.write { db in
            try db.execute(sql: #"INSERT INTO tag(name, n) VALUES ('swift "6"', 1)"#)
            try db.execute(sql: "INSERT INTO membership(team, player) VALUES ('red', 7)")
            try db.execute(sql: "INSERT INTO log(message) VALUES ('hello')")
        }
        let save = try await first(1, of: saves)[0]
        XCTAssertEqual(save.change(of: "tag")?.inserted, [.text(#"swift "6""#)])
        XCTAssertEqual(save.change(of: "membership")?.inserted, [.composite([.text("red"), .integer(7)])])
        XCTAssertEqual(save.change(of: "log")?.inserted, [.integer(1)])
        XCTAssertTrue(save.jsonLine().contains(#""inserted":[["red",7]]"#), save.jsonLine())
    }

    func testPrimaryKeyChange_isADeleteOfTheOldKeyAndAnInsertOfTheNew() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(code TEXT PRIMARY KEY, v); INSERT INTO t VALUES ('a', 1)") }
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        try await writer.write { db in try db.execute(sql: "UPDATE t SET code = 'b' WHERE code = 'a'") }
        let save = try await first(1, of: saves)[0]
        XCTAssertEqual(save.changes, [EntityChange(entity: "t", inserted: ["b"], deleted: ["a"])])
    }

    func testTableCreatedInsideAWrite_isTrackedAtOnce_withItsFirstRowsDelivered() async throws {
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(sql: "CREATE TABLE fresh(id INTEGER PRIMARY KEY); INSERT INTO fresh(id) VALUES (1), (2)")
        }
        try await writer.write { db in try db.execute(sql: "INSERT INTO fresh(id) VALUES (3)") }
        let received = try await first(2, of: saves)
        XCTAssertEqual(received.map { $0.change(of: "fresh")?.inserted ?? [] }, [[1, 2], [3]])
    }

    func testWritesThroughThePoolDirectly_areDeliveredAsExternal_andNotMergedWithTheNextWrite() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        try await writer.pool.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (1)") }
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (2)") }
        let received = try await first(2, of: saves)
        XCTAssertEqual(received.map(\.author), [Save.externalAuthor, "writer"])
        XCTAssertEqual(received.map { $0.change(of: "t")?.inserted ?? [] }, [[1], [2]])
    }

    func testPayloadOfAWriteAfterAnOutsideWriter_listsOnlyItsOwnRows() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        // A writer outside the library: its change is left unsealed, and the
        // library's next write closes it into a transaction of its own first.
        let outside = try DatabaseQueue(path: group + "/store.sqlite")
        try await outside.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (1)") }
        try outside.close()
        let written = try await writer.writeWithSequence { db in try db.execute(sql: "INSERT INTO t(id) VALUES (2)") }
        let seq = try XCTUnwrap(written.seq)
        await writer.flushPublications()
        let name = String(format: "%020lld.v2.json", seq)
        let data = try Data(contentsOf: URL(fileURLWithPath: group + "/members/writer/" + name))
        let payload = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let changes = try XCTUnwrap(payload["changes"] as? [[String: Any]])
        XCTAssertEqual(changes.count, 1, "\(changes)")
        XCTAssertEqual(changes.first?["inserted"] as? [Int], [2], "the outside writer's row 1 is a transaction of its own")
        let authors = try await writer.pool.read { db in
            try String?.fetchAll(
                db, sql: "SELECT author FROM groupstore_transaction WHERE seq <= ? ORDER BY seq DESC LIMIT 2", arguments: [seq])
        }
        XCTAssertEqual(authors, ["writer", nil], "the write's transaction, and before it the outside writer's")
    }

    func testAWriteThatAlsoChangesTheHistorysOwnTables_isSealed_andDoesNotTrap() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        // SQL a user may run through a write (or `groupstore exec --sql`):
        // the library's tables are not refused, so a debug build's check of
        // its derived state must not trap on them.
        let written = try await writer.writeWithSequence { db in
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            try db.execute(sql: "UPDATE groupstore_meta SET value = value + 1 WHERE key = 'registry_version'")
        }
        let seq = try XCTUnwrap(written.seq)
        let author = try await writer.pool.read { db in
            try String.fetchOne(db, sql: "SELECT author FROM groupstore_transaction WHERE seq = ?", arguments: [seq])
        }
        XCTAssertEqual(author, "writer")
    }

    func testMigrationAddingATableInOneMember_isPickedUpByAMemberAlreadyRunning() async throws {
        var v1 = DatabaseMigrator()
        v1.registerMigration("v1") { db in try db.execute(sql: "CREATE TABLE a(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader") { $0.migrator = v1 }
        let saves = reader.saves()
        try await reader.start()

        var v2 = v1
        v2.registerMigration("v2") { db in
            try db.execute(sql: "CREATE TABLE b(id INTEGER PRIMARY KEY); INSERT INTO b(id) VALUES (1)")
        }
        let writer = try open("writer") { $0.migrator = v2 }
        try await writer.write { db in try db.execute(sql: "INSERT INTO b(id) VALUES (2)") }
        let received = try await first(2, of: saves)
        XCTAssertEqual(received.map { $0.change(of: "b")?.inserted ?? [] }, [[1], [2]])
    }

    func testCommitTimesInJSON_haveSixDecimals_andReadBackToTheMicrosecond() throws {
        let exact: [Double: String] = [
            0: "0.000000", 1: "1.000000", 1_764_086_400.25: "1764086400.250000", -1.5: "-1.500000",
            0.000_123: "0.000123", 86_400.000_001: "86400.000001",
        ]
        var values = Array(exact.keys)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 { values.append(Double.random(in: 0...4_000_000_000, using: &generator)) }
        for value in values {
            let date = Date(timeIntervalSince1970: value)
            let line = Save(seq: 1, author: "a", committedAt: date, changes: []).jsonLine()
            let start = try XCTUnwrap(line.range(of: "\"committedAt\":")).upperBound
            let text = String(line[start...].prefix { $0 != "," })
            if let expected = exact[value] { XCTAssertEqual(text, expected) }
            let fraction = try XCTUnwrap(text.split(separator: ".").last)
            XCTAssertEqual(fraction.count, 6, text)
            let parsed = try XCTUnwrap(Double(text), text)
            // Half a microsecond, and the rounding of a Date's seconds (kept
            // from 2001) and of the text read back.
            let seconds = date.timeIntervalSince1970
            XCTAssertLessThanOrEqual(abs(parsed - seconds), 0.000_000_5 + 4 * seconds.ulp, "\(seconds) printed as \(text)")
        }
    }

    func testKeyValueJSON_roundTrips() {
        let values: [KeyValue] = [
            .integer(-42), .integer(Int64.max), .real(1.5), .text("quote \" backslash \\ tab \t é 🐢"), .null,
            .composite([.text("a"), .integer(1), .composite([])]),
        ]
        for value in values {
            XCTAssertEqual(KeyValue(json: value.json), value, value.json)
        }
        // Found by the fuzzer: an integral real must read back as a real, and
        // numbers outside JSON's grammar are not keys.
        XCTAssertEqual(KeyValue(json: KeyValue.real(1500).json), .real(1500))
        XCTAssertEqual(KeyValue(json: "1.5e3"), .real(1500))
        for invalid in ["00042", "42.", "-", "1e", ".5", "+1"] { XCTAssertNil(KeyValue(json: invalid), invalid) }
        XCTAssertNil(KeyValue(json: "{\"object\":1}"))
        XCTAssertNil(KeyValue(json: "[1,"))
        XCTAssertEqual(KeyValue(json: #""\ud83d\udc22""#), .text("🐢"))
    }
}
