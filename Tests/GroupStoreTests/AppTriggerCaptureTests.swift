import Foundation
import GRDB
import GroupStore
import XCTest

/// The app's own triggers on a tracked table, created after the library's:
/// SQLite runs a table's triggers newest first, so the library makes its own
/// again, and what the app's triggers do to a row is recorded after the
/// change that caused it.
final class AppTriggerCaptureTests: CaptureTestCase {
    private func tables(_ writer: GroupStore) async throws {
        try await writer.write { db in
            try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE n(id INTEGER PRIMARY KEY, b)")
            try db.execute(sql: "INSERT INTO n(id, b) VALUES (1, 1), (2, 2)")
        }
    }

    /// The change of `n` in the save that also inserted `mark` row `key`.
    private func change(until key: Int64, of saves: SaveStream) async throws -> EntityChange {
        let received = try await self.saves(until: .integer(key), in: "mark", of: saves)
        return try XCTUnwrap(received.last?.change(of: "n"), "\(received)")
    }

    /// The change of `n` delivered for `statement`, a library write after
    /// the app's `trigger` was created (by a library write too).
    private func delivered(afterTrigger trigger: String, _ statement: String) async throws -> EntityChange {
        let writer = try open("writer")
        try await tables(writer)
        try await writer.write { db in try db.execute(sql: trigger) }
        let (_, saves) = try reader()
        try await writer.write { db in try db.execute(sql: statement + "; INSERT INTO mark VALUES (1)") }
        return try await change(until: 1, of: saves)
    }

    func testARowTheAppsTriggerDeletesOnUpdate_isDeleted_throughTheLibrary() async throws {
        let n = try await delivered(
            afterTrigger: "CREATE TRIGGER del_neg AFTER UPDATE ON n WHEN NEW.b < 0 BEGIN DELETE FROM n WHERE id = NEW.id; END",
            "UPDATE n SET b = -1 WHERE id = 1")
        XCTAssertEqual(n.deleted, [1])
        XCTAssertEqual(n.updated, [])
    }

    func testTheShellsTrigger_andTheShellsUpdate_afterTheLibraryNoticedIt_isDeleted() async throws {
        let writer = try open("writer")
        try await tables(writer)
        let (_, saves) = try reader()
        try shell("CREATE TRIGGER del_neg AFTER UPDATE ON n WHEN NEW.b < 0 BEGIN DELETE FROM n WHERE id = NEW.id; END")
        // The library's next write tracks the schema change first.
        try await writer.write { db in try db.execute(sql: "INSERT INTO mark VALUES (1)") }
        try shell("UPDATE n SET b = -1 WHERE id = 2")
        try await writer.write { db in try db.execute(sql: "INSERT INTO mark VALUES (2)") }
        _ = try await self.saves(until: .integer(1), in: "mark", of: saves)
        let received = try await self.saves(until: .integer(2), in: "mark", of: saves)
        let n = try XCTUnwrap(received.compactMap { $0.change(of: "n") }.last, "\(received)")
        XCTAssertEqual(n.deleted, [2])
        XCTAssertEqual(n.updated, [])
    }

    func testARowTheAppsTriggerUpdatesOnInsert_isInserted() async throws {
        let n = try await delivered(
            afterTrigger: "CREATE TRIGGER stamp AFTER INSERT ON n BEGIN UPDATE n SET b = 100 WHERE id = NEW.id; END",
            "INSERT INTO n(id, b) VALUES (3, 0)")
        XCTAssertEqual(n.inserted, [3])
        XCTAssertEqual(n.updated, [])
    }
}
