import Foundation
import GRDB
import GroupStore
import XCTest

/// Every primary-key shape SQLite accepts names its row exactly.
final class KeyCaptureTests: CaptureTestCase {
    private func prepare(_ sql: String) async throws -> SaveStream {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); " + sql) }
        return try reader().1
    }

    func testTwoNullTextKeys_areTwoKeys() async throws {
        let saves = try await prepare("CREATE TABLE n(k TEXT PRIMARY KEY, v)")
        try shell("INSERT INTO n VALUES (NULL, 1), (NULL, 2), ('a', 3); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.last?.change(of: "n")?.inserted, [.rowid(1), .rowid(2), "a"])
    }

    func testDistinctInvalidUTF8TextKeys_stayDistinct_andSurviveJSON() async throws {
        let saves = try await prepare("CREATE TABLE n(k TEXT PRIMARY KEY, v)")
        try shell(
            "INSERT INTO n VALUES (CAST(x'ff01' AS TEXT), 1), (CAST(x'fe01' AS TEXT), 2), (CAST(x'610062' AS TEXT), 3); INSERT INTO mark VALUES (1)"
        )
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        let keys = received.last?.change(of: "n")?.inserted ?? []
        XCTAssertEqual(keys, [.invalidText([0xFF, 0x01]), .invalidText([0xFE, 0x01]), .text("a\u{0}b")])
        for key in keys { XCTAssertEqual(KeyValue(json: key.json), key, key.json) }
    }

    func testBlobAndRealKeys_keepTheirType() async throws {
        let saves = try await prepare(
            "CREATE TABLE b(k BLOB PRIMARY KEY); CREATE TABLE f(k REAL PRIMARY KEY); CREATE TABLE c(a, b, PRIMARY KEY (a, b))")
        try shell(
            """
            INSERT INTO b VALUES (x'00ff'), ('00FF');
            INSERT INTO f VALUES (0.1), (1e300);
            INSERT INTO c VALUES (x'01', 'é'), (0.30000000000000004, NULL), (CAST(x'ff' AS TEXT), 2);
            INSERT INTO mark VALUES (1);
            """)
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        let save = try XCTUnwrap(received.last)
        XCTAssertEqual(save.change(of: "b")?.inserted, [.blob([0x00, 0xFF]), .text("00FF")])
        XCTAssertEqual(save.change(of: "f")?.inserted, [.real(0.1), .real(1e300)])
        XCTAssertEqual(
            save.change(of: "c")?.inserted,
            [.composite([.blob([1]), .text("é")]), .rowid(2), .composite([.invalidText([0xFF]), .integer(2)])])
        XCTAssertTrue(save.jsonLine().contains(#"{"blob":"00FF"},"00FF""#), save.jsonLine())
    }

    func testUpdatingTheRowidOfATableWithoutDeclaredKey_isADeleteAndAnInsert() async throws {
        let saves = try await prepare("CREATE TABLE tn(v); INSERT INTO tn VALUES ('a'), ('b')")
        try shell("UPDATE tn SET rowid = rowid + 10; INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.last?.change(of: "tn"), EntityChange(entity: "tn", inserted: [11, 12], deleted: [1, 2]))
    }

    func testANetEmptyTransaction_isNotDelivered() async throws {
        let saves = try await prepare("CREATE TABLE t(id INTEGER PRIMARY KEY)")
        try shell("INSERT INTO t VALUES (1); DELETE FROM t WHERE id = 1;")
        try shell("INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.count, 1, "only the marker's save: \(received)")
    }

    func testInScopeEntityNames_matchLikeSQLiteIgnoringCase() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(sql: "CREATE TABLE Notes(id INTEGER PRIMARY KEY); CREATE TABLE other(id INTEGER PRIMARY KEY)")
        }
        let (_, saves) = try reader { $0.inScopeEntityNames = ["NOTES"] }
        try shell("INSERT INTO other VALUES (1)")
        try shell("INSERT INTO notes VALUES (1)")
        let received = try await first(1, of: saves)
        XCTAssertEqual(received[0].changes, [EntityChange(entity: "Notes", inserted: [1])])
        XCTAssertNotNil(received[0].change(of: "notes"))
    }
}
