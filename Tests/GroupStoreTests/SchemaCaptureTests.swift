import Foundation
import GRDB
import GroupStore
import XCTest

/// Schema changes by any writer: new tables tracked from their first row,
/// migrations, dropped and renamed columns and tables, very wide tables.
final class SchemaCaptureTests: CaptureTestCase {
    private func withMark(_ writer: GroupStore) async throws {
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY)") }
    }

    func testRowsTheShellWritesIntoATableTheShellCreated_areDeliveredFromTheFirstRow() async throws {
        try await withMark(try open("writer"))
        let (_, saves) = try reader()
        try shell("CREATE TABLE s(id INTEGER PRIMARY KEY); INSERT INTO s VALUES (1), (2);")
        try shell("INSERT INTO s VALUES (3); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        let s = folded(received, "s")
        XCTAssertEqual(s.inserted, [1, 2, 3])
        XCTAssertTrue(s.reset, "a new table is announced as reset")
    }

    func testATableCreatedAndFilledWhileAMemberWasDown_isDeliveredWhole() async throws {
        try await withMark(try open("writer"))
        let (first, _) = try reader()
        await first.close()
        try shell("CREATE TABLE s(id INTEGER PRIMARY KEY, v); INSERT INTO s VALUES (1, 'a'), (2, 'b'); INSERT INTO mark VALUES (1);")
        let (_, saves) = try reader()
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(folded(received, "s").inserted, [1, 2])
    }

    func testDropAndCreateAgainByTheShell_reportsTheResetAndTheNewRows() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        let (_, saves) = try reader()
        try shell("DROP TABLE t; CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (7, 'x');")
        try shell("INSERT INTO t VALUES (8, 'y'); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        let t = folded(received, "t")
        XCTAssertTrue(t.reset)
        XCTAssertEqual(t.inserted, [7, 8])
    }

    func testAddColumnThenUpdateInOneMigration_reportsTheUpdate() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE base(id INTEGER PRIMARY KEY); INSERT INTO base VALUES (1), (2)") }
        let (_, saves) = try reader()
        try await writer.write { db in
            try db.execute(sql: "ALTER TABLE base ADD COLUMN extra TEXT; UPDATE base SET extra = 'e' WHERE id = 1; INSERT INTO mark VALUES (1)")
        }
        try shell("ALTER TABLE base ADD COLUMN more TEXT; UPDATE base SET more = 'm' WHERE id = 2; INSERT INTO mark VALUES (2)")
        let received = try await self.saves(until: 2, in: "mark", of: saves)
        let changes = received.compactMap { $0.change(of: "base") }
        XCTAssertEqual(changes.map(\.updated), [[1], [2]])
        XCTAssertEqual(changes.map(\.reset), [true, true], "a changed table definition is announced")
    }

    func testDropColumn_worksOnATrackedTable_fromTheShellAndTheLibrary() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, c); INSERT INTO t VALUES (1, 1, 2, 3)") }
        let (_, saves) = try reader()
        try shell("ALTER TABLE t DROP COLUMN b; UPDATE t SET a = 10;")
        try await writer.write { db in try db.execute(sql: "ALTER TABLE t DROP COLUMN c; UPDATE t SET a = 11; INSERT INTO mark VALUES (1)") }
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(folded(received, "t").updated, [1])
        let columns = try await writer.pool.read { db in try db.columns(in: "t").map(\.name) }
        XCTAssertEqual(columns, ["id", "a"])
    }

    func testRenameColumn_thenUpdate_isReported() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 1)") }
        let (_, saves) = try reader()
        try shell("ALTER TABLE t RENAME COLUMN v TO w; UPDATE t SET w = 2;")
        try await writer.write { db in try db.execute(sql: "ALTER TABLE t RENAME COLUMN id TO key; UPDATE t SET w = 3; INSERT INTO mark VALUES (1)") }
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        let changes = received.compactMap { $0.change(of: "t") }
        XCTAssertEqual(changes.map(\.updated), [[1], [1]])
        XCTAssertEqual(changes.map(\.reset), [true, true])
    }

    func testRenameTableByTheShell_reportsLaterRowsUnderTheNewName() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE old(id INTEGER PRIMARY KEY); INSERT INTO old VALUES (1)") }
        let (_, saves) = try reader()
        try shell("ALTER TABLE old RENAME TO new; INSERT INTO new VALUES (2);")
        try shell("INSERT INTO new VALUES (3); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertTrue(folded(received, "old").reset)
        XCTAssertTrue(folded(received, "new").reset)
        XCTAssertEqual(folded(received, "new").inserted, [2, 3])
        XCTAssertEqual(folded(received, "old").inserted, [])
    }

    func testRenameTableByTheLibrary_isAResetOfBothNames_notEveryRowInserted() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE old(id INTEGER PRIMARY KEY); INSERT INTO old VALUES (1), (2)") }
        let (_, saves) = try reader()
        try await writer.write { db in try db.execute(sql: "ALTER TABLE old RENAME TO new; INSERT INTO mark VALUES (1)") }
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.last?.change(of: "old"), EntityChange(entity: "old", reset: true))
        XCTAssertEqual(received.last?.change(of: "new"), EntityChange(entity: "new", reset: true))
    }

    func testIntegerPrimaryKeyDesc_andAColumnNamedRowid_areTracked() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY)") }
        let (_, saves) = try reader()
        try shell(
            """
            CREATE TABLE d(id INTEGER PRIMARY KEY DESC, v); INSERT INTO d(v) VALUES (1);
            CREATE TABLE r(rowid TEXT, v); INSERT INTO r VALUES ('x', 1), ('y', 2);
            """)
        try await writer.write { db in
            try db.execute(sql: "INSERT INTO d(v) VALUES (2); UPDATE r SET v = 5 WHERE rowid = 'y'; INSERT INTO mark VALUES (1)")
        }
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        // `INTEGER PRIMARY KEY DESC` is no rowid alias: the key is NULL, so
        // the rows are named by rowid, two rows two keys.
        XCTAssertEqual(folded(received, "d").inserted, [.rowid(1), .rowid(2)])
        XCTAssertEqual(folded(received, "r").inserted, [1, 2])
        XCTAssertEqual(folded(received, "r").updated, [2])
    }

    func testAThousandColumnTable_canBeCreatedThroughTheLibraryAndTheShell_andMembersStillOpen() async throws {
        let writer = try open("writer")
        let columns = (1...1000).map { "c\($0)" }.joined(separator: ", ")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE wide(id INTEGER PRIMARY KEY, \(columns)); INSERT INTO wide(id, c500) VALUES (1, 'x')") }
        try shell("CREATE TABLE wide2(id INTEGER PRIMARY KEY, \(columns)); INSERT INTO wide2(id, c999) VALUES (1, 'y'); UPDATE wide SET c1000 = 'z';")
        let (_, saves) = try reader("late-joiner")
        try shell("INSERT INTO mark VALUES (1)")
        _ = try await self.saves(until: 1, in: "mark", of: saves)
        try await writer.write { db in try db.execute(sql: "UPDATE wide2 SET c2 = 'w'") }
        XCTAssertNoThrow(try open("another"))
    }

    func testVacuumRenumberingRowids_isAnnouncedAsAReset() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE n(v); INSERT INTO n VALUES ('a'), ('b'), ('c'); DELETE FROM n WHERE v = 'a'") }
        let (_, saves) = try reader()
        try shell("VACUUM", transaction: false)
        try shell("INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertTrue(folded(received, "n").reset)
        let rowids = try await writer.pool.read { db in try Int64.fetchAll(db, sql: "SELECT rowid FROM n ORDER BY rowid") }
        XCTAssertEqual(rowids, [1, 2], "VACUUM renumbered the rows")
    }

    func testATableCreatedUnderTheLibrarysPrefix_isNotTakenForAVacuum() async throws {
        // The cloud bridge keeps its state in groupstore_cloud_* tables: creating them
        // moves the schema version by one, as VACUUM does, but it is not a rewrite.
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE n(v); INSERT INTO n VALUES ('a')") }
        let (_, saves) = try reader()
        try shell("CREATE TABLE groupstore_cloud_example(key TEXT PRIMARY KEY) WITHOUT ROWID", transaction: false)
        try shell("INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertFalse(received.contains { $0.change(of: "n")?.reset == true }, "no reset of n: \(received)")
    }
}
