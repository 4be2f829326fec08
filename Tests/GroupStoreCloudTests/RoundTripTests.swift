import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import XCTest

/// Every mapped type, NULLs, assets and relationships between two groups.
class RoundTripTests: CloudTestCase {
    static let schema = """
        CREATE TABLE author(id TEXT PRIMARY KEY, name TEXT NOT NULL, born DATE, active BOOLEAN, rating REAL, visits INTEGER,
                            photo BLOB, anything);
        CREATE TABLE book(id TEXT PRIMARY KEY, title TEXT, author_id TEXT REFERENCES author(id) ON DELETE CASCADE, cover BLOB);
        CREATE TABLE tag(id TEXT PRIMARY KEY, label TEXT);
        CREATE TABLE book_tag(book_id TEXT NOT NULL REFERENCES book(id) ON DELETE CASCADE,
                              tag_id TEXT NOT NULL REFERENCES tag(id) ON DELETE CASCADE, PRIMARY KEY (book_id, tag_id));
        """
    static let tables = ["author", "book", "tag", "book_tag"]

    func testEveryTypeNullsAndRelationships_reachTheOtherGroupIntact() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in
            try db.execute(
                sql: """
                    INSERT INTO author VALUES ('ann', 'Ann', '1970-01-02', 1, 4.5, 9007199254740993, x'00FF10', 'x');
                    INSERT INTO author VALUES ('bob', 'Bob', NULL, 0, NULL, -1, NULL, 42);
                    INSERT INTO author VALUES ('cyd', 'Cyd ☃ \u{1F600}', '2024-02-29 12:00:00.000', NULL, -0.5, 0, x'', 1.25);
                    INSERT INTO book VALUES ('b1', 'One', 'ann', NULL), ('b2', 'Two', 'ann', x'01'), ('b3', NULL, 'bob', NULL);
                    INSERT INTO tag VALUES ('t1', 'red'), ('t2', 'blue');
                    INSERT INTO book_tag VALUES ('b1', 't1'), ('b1', 't2'), ('b2', 't1');
                    """)
        }
        let up = try await sync("a", tables: Self.tables)
        XCTAssertEqual(up.uploaded, 3 + 3 + 2 + 3)
        let down = try await sync("b", tables: Self.tables)
        XCTAssertEqual(down.fetched, 11)
        for table in Self.tables {
            XCTAssertEqual(try dump(b, table), try dump(a, table), "table \(table) differs")
        }
        // Type classes survive: the integer beyond 2^53, the blob, the text in an untyped column.
        let types = try await b.pool.read { db in
            try String.fetchAll(db, sql: "SELECT typeof(visits) || typeof(photo) || typeof(anything) FROM author ORDER BY id")
        }
        XCTAssertEqual(types, ["integerblobtext", "integernullinteger", "integerblobreal"])
        // The to-many through the inverse, and the many-to-many, as a reader would walk them.
        let books = try await b.pool.read { db in
            try String.fetchAll(db, sql: "SELECT b.id FROM book b JOIN author a ON a.id = b.author_id WHERE a.name = 'Ann' ORDER BY b.id")
        }
        XCTAssertEqual(books, ["b1", "b2"])
        let tags = try await b.pool.read { db in
            try String.fetchAll(
                db, sql: "SELECT t.label FROM book_tag bt JOIN tag t ON t.id = bt.tag_id WHERE bt.book_id = 'b1' ORDER BY 1")
        }
        XCTAssertEqual(tags, ["blue", "red"])

        // Edits and deletes flow back the other way; a cascade in B reaches A.
        try await b.write { db in
            try db.execute(sql: "UPDATE author SET rating = 5.0 WHERE id = 'ann'; DELETE FROM author WHERE id = 'bob'")
        }
        try await sync("b", tables: Self.tables)
        try await sync("a", tables: Self.tables)
        for table in Self.tables {
            XCTAssertEqual(try dump(a, table), try dump(b, table), "table \(table) differs after edits from B")
        }
        let orphans = try await a.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM book WHERE author_id = 'bob'") }
        XCTAssertEqual(orphans, 0)
    }

    func testLargeBlobTravelsAsAnAsset_andIsNotUploadedAgainWhenUnchanged() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        var big = [UInt8](repeating: 0, count: 5 * 1024 * 1024)
        for index in big.indices { big[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 7) }
        let photo = Data(big)
        try await a.write { db in
            try db.execute(sql: "INSERT INTO author(id, name, photo) VALUES ('ann', 'Ann', ?)", arguments: [photo])
        }
        let recording = RecordingRemote(try defaultRemote())
        try await sync("a", tables: Self.tables, remote: recording)
        try await sync("b", tables: Self.tables)
        let copy = try await b.pool.read { try Data.fetchOne($0, sql: "SELECT photo FROM author WHERE id = 'ann'") }
        XCTAssertEqual(copy, photo)
        XCTAssertEqual(recording.uploadedAssets.map(\.size), [photo.count], "the photo goes up once, as an asset")
        guard case .asset = recording.changes.first?.sentFields["photo"] else {
            return XCTFail("the record names the photo as an asset: \(String(describing: recording.changes.first))")
        }

        // Another field changes: the upload carries that field only, the photo stays as it is.
        try await a.write { db in try db.execute(sql: "UPDATE author SET name = 'Annie' WHERE id = 'ann'") }
        let summary = try await sync("a", tables: Self.tables, remote: recording)
        XCTAssertEqual(summary.uploaded, 1)
        XCTAssertEqual(recording.changes.last?.sentFields, ["name": .text("Annie")])
        XCTAssertEqual(recording.uploadedAssets.count, 1, "the unchanged photo is not uploaded again")
        try await sync("b", tables: Self.tables)
        let (name, photoAfter) = try await b.pool.read { db in
            (try String.fetchOne(db, sql: "SELECT name FROM author"), try Data.fetchOne(db, sql: "SELECT photo FROM author"))
        }
        XCTAssertEqual(name, "Annie")
        XCTAssertEqual(photoAfter, photo)
    }

    func testUUIDKeysAndALinkTableBetweenThem_roundTrip() async throws {
        let schema = """
            CREATE TABLE person(id BLOB PRIMARY KEY, name TEXT);
            CREATE TABLE team(id UUID PRIMARY KEY, name TEXT);
            CREATE TABLE member(person BLOB NOT NULL REFERENCES person(id) ON DELETE CASCADE,
                                team UUID NOT NULL REFERENCES team(id) ON DELETE CASCADE, PRIMARY KEY (person, team));
            """
        let a = try open("a", schema: schema)
        let b = try open("b", schema: schema)
        let ann = Data(UUID().uuidString.utf8.prefix(16))
        let red = UUID().uuidString
        try await a.write { db in
            try db.execute(sql: "INSERT INTO person VALUES (?, 'Ann')", arguments: [ann])
            try db.execute(sql: "INSERT INTO team VALUES (?, 'Red')", arguments: [red])
            try db.execute(sql: "INSERT INTO member VALUES (?, ?)", arguments: [ann, red])
        }
        try await sync("a", tables: ["person", "team", "member"])
        try await sync("b", tables: ["person", "team", "member"])
        for table in ["person", "team", "member"] {
            XCTAssertEqual(try dump(b, table), try dump(a, table), "table \(table)")
        }
        let types = try await b.pool.read { try String.fetchAll($0, sql: "SELECT typeof(person) || typeof(team) FROM member") }
        XCTAssertEqual(types, ["blobtext"])
        XCTAssertEqual(try dump(b, "member").count, 1)
    }

    func testTextWithANulByteAndTextThatIsNotUTF8_arriveByteForByte() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in
            try db.execute(
                sql: """
                    INSERT INTO author(id, name, anything) VALUES ('odd', 'a' || char(0) || 'b', CAST(X'61FF62C3' AS TEXT));
                    INSERT INTO book(id, title, author_id) VALUES ('b1', CAST(X'00' AS TEXT), 'odd');
                    """)
        }
        try await sync("a", tables: Self.tables)
        try await sync("b", tables: Self.tables)
        let query = """
            SELECT hex(name) || typeof(name) || hex(anything) || typeof(anything)
                   || (SELECT hex(title) || typeof(title) FROM book WHERE id = 'b1') FROM author WHERE id = 'odd'
            """
        let expected = try await a.pool.read { try String.fetchOne($0, sql: query) }
        XCTAssertEqual(expected, "610062text61FF62C3text00text")
        let copy = try await b.pool.read { try String.fetchOne($0, sql: query) }
        XCTAssertEqual(copy, expected)
        // And back: an edit in B of another field leaves them as they are in A.
        try await b.write { db in try db.execute(sql: "UPDATE author SET rating = 1.5 WHERE id = 'odd'") }
        try await sync("b", tables: Self.tables)
        try await sync("a", tables: Self.tables)
        let after = try await a.pool.read { try String.fetchOne($0, sql: query) }
        XCTAssertEqual(after, expected)
    }
}
