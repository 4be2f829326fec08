import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import XCTest

/// Echo suppression by value: an applied remote change is not uploaded
/// again; what applying it caused locally is.
class EchoTests: CloudTestCase {
    static let schema = """
        CREATE TABLE author(id TEXT PRIMARY KEY, name TEXT);
        CREATE TABLE book(id TEXT PRIMARY KEY, title TEXT, author_id TEXT REFERENCES author(id) ON DELETE CASCADE);
        CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT);
        """
    static let tables = ["author", "book", "note"]

    func testAppliedRemoteChanges_areNotUploadedAgain() async throws {
        let a = try open("a", schema: Self.schema)
        _ = try open("b", schema: Self.schema)
        try await a.write { db in
            try db.execute(
                sql:
                    "INSERT INTO author VALUES ('ann', 'Ann'); INSERT INTO book VALUES ('b1', 'One', 'ann'); INSERT INTO note VALUES ('n1', 'x')"
            )
        }
        try await sync("a", tables: Self.tables)
        let recording = RecordingRemote(try defaultRemote())
        let first = try await sync("b", tables: Self.tables, remote: recording)
        XCTAssertEqual(first.fetched, 3)
        XCTAssertEqual(recording.changes.count, 0, "nothing applied goes back up: \(recording.changes)")
        // And again: the applied rows come back through B's history as transactions of `cloud`; still nothing.
        let second = try await sync("b", tables: Self.tables, remote: recording)
        XCTAssertEqual(second.uploaded, 0)
        XCTAssertEqual(recording.changes.count, 0)
        XCTAssertEqual(try CloudSyncStatus.read(group: group("b")).pending, 0)
    }

    func testWhatAnAppTriggerDidToAnAppliedRow_isUploaded() async throws {
        let a = try open("a", schema: Self.schema)
        _ = try open(
            "b",
            schema: Self.schema + """
                CREATE TRIGGER note_stamp AFTER INSERT ON note BEGIN UPDATE note SET body = body || ' (seen by B)' WHERE id = new.id; END;
                """)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'hello'); INSERT INTO author VALUES ('ann', 'Ann')") }
        try await sync("a", tables: Self.tables)
        let recording = RecordingRemote(try defaultRemote())
        let summary = try await sync("b", tables: Self.tables, remote: recording)
        XCTAssertEqual(summary.uploaded, 1)
        XCTAssertEqual(recording.changes.map(\.id.name), ["n1"], "only the row the trigger changed goes up")
        XCTAssertEqual(recording.changes.first?.sentFields, ["body": .text("hello (seen by B)")])
        try await sync("a", tables: Self.tables)
        XCTAssertEqual(try dump(a, "note"), ["t:n1|t:hello (seen by B)"])
    }

    func testACascadeCausedByAnAppliedDelete_isUploaded() async throws {
        let (a, b) = try await authorWithTwoBooksInBothGroups()
        // The sqlite3 shell deletes the author in A with foreign keys off (its default): A's books stay.
        try shell("a", "DELETE FROM author WHERE id = 'ann'")
        try await sync("a", tables: Self.tables)
        // B applies the delete; its foreign key cascades to the books, and those deletes go up.
        try await expectBothBookDeletesUploadedByB(a, b, "A gets the cascade B's foreign key made")
    }

    /// B syncs, uploading the deletes of both books (and nothing else); A then has no books either.
    private func expectBothBookDeletesUploadedByB(
        _ a: GroupStore, _ b: GroupStore, _ message: String, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let recording = RecordingRemote(try defaultRemote())
        try await sync("b", tables: Self.tables, remote: recording)
        XCTAssertEqual(try dump(b, "book"), [], file: file, line: line)
        XCTAssertEqual(Set(recording.changes.map(\.id.name)), ["b1", "b2"], file: file, line: line)
        XCTAssertTrue(recording.changes.allSatisfy { if case .delete = $0 { true } else { false } }, file: file, line: line)
        try await sync("a", tables: Self.tables)
        XCTAssertEqual(try dump(a, "book"), [], message, file: file, line: line)
    }

    func testACascadeIntoARowTheSameFetchWrote_isUploadedToo() async throws {
        let (a, b) = try await authorWithTwoBooksInBothGroups()
        // In A (the shell: foreign keys off), b1 is edited and its author deleted: one fetch brings B both.
        try shell("a", "DELETE FROM author WHERE id = 'ann'; UPDATE book SET title = 'One, edited' WHERE id = 'b1'")
        try await sync("a", tables: Self.tables)
        // B writes b1, then the author's delete cascades to b1 and b2: both deletes go up (b1 was
        // skipped as "written by the apply", leaving B without it while the remote kept it).
        try await expectBothBookDeletesUploadedByB(a, b, "A and B agree")
    }

    func testACascadeIntoARowTheSameFetchInserted_isUploadedToo() async throws {
        let (a, b) = try await authorWithTwoBooksInBothGroups()
        // In A (the shell: foreign keys off), a third book is added and its author deleted: one fetch brings B both.
        try shell("a", "INSERT INTO book VALUES ('b3', 'Three', 'ann'); DELETE FROM author WHERE id = 'ann'")
        try await sync("a", tables: Self.tables)
        // B inserts b3, then the author's delete cascades to the three books: the history folds b3's
        // insert and delete into nothing, yet b3's delete goes up too (B recorded b3 as applied
        // without holding it, while the remote kept it).
        let recording = RecordingRemote(try defaultRemote())
        try await sync("b", tables: Self.tables, remote: recording)
        XCTAssertEqual(try dump(b, "book"), [])
        XCTAssertEqual(Set(recording.changes.map(\.id.name)), ["b1", "b2", "b3"])
        XCTAssertTrue(recording.changes.allSatisfy { if case .delete = $0 { true } else { false } })
        XCTAssertEqual(try CloudSyncStatus.read(group: group("b")).pending, 0)
        try await sync("a", tables: Self.tables)
        XCTAssertEqual(try dump(a, "book"), [], "A and B agree")
    }

    /// Groups A and B, both holding author ann and her books b1 and b2, synced.
    private func authorWithTwoBooksInBothGroups() async throws -> (GroupStore, GroupStore) {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in
            try db.execute(
                sql: "INSERT INTO author VALUES ('ann', 'Ann'); INSERT INTO book VALUES ('b1', 'One', 'ann'), ('b2', 'Two', 'ann')")
        }
        try await sync("a", tables: Self.tables)
        try await sync("b", tables: Self.tables)
        return (a, b)
    }
}
