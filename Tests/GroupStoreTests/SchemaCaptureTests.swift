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
        try await writer.write { db in
            try db.execute(
                sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        }
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
        try await writer.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE base(id INTEGER PRIMARY KEY); INSERT INTO base VALUES (1), (2)"
            )
        }
        let (_, saves) = try reader()
        try await writer.write { db in
            try db.execute(
                sql: "ALTER TABLE base ADD COLUMN extra TEXT; UPDATE base SET extra = 'e' WHERE id = 1; INSERT INTO mark VALUES (1)")
        }
        try shell("ALTER TABLE base ADD COLUMN more TEXT; UPDATE base SET more = 'm' WHERE id = 2; INSERT INTO mark VALUES (2)")
        let received = try await self.saves(until: 2, in: "mark", of: saves)
        let changes = received.compactMap { $0.change(of: "base") }
        XCTAssertEqual(changes.map(\.updated), [[1], [2]])
        XCTAssertEqual(changes.map(\.reset), [true, true], "a changed table definition is announced")
    }

    func testDropColumn_worksOnATrackedTable_fromTheShellAndTheLibrary() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, c); INSERT INTO t VALUES (1, 1, 2, 3)"
            )
        }
        let (_, saves) = try reader()
        try shell("ALTER TABLE t DROP COLUMN b; UPDATE t SET a = 10;")
        try await writer.write { db in try db.execute(sql: "ALTER TABLE t DROP COLUMN c; UPDATE t SET a = 11; INSERT INTO mark VALUES (1)")
        }
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(folded(received, "t").updated, [1])
        let columns = try await writer.pool.read { db in try db.columns(in: "t").map(\.name) }
        XCTAssertEqual(columns, ["id", "a"])
    }

    func testRenameColumn_thenUpdate_isReported() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 1)")
        }
        let (_, saves) = try reader()
        try shell("ALTER TABLE t RENAME COLUMN v TO w; UPDATE t SET w = 2;")
        try await writer.write { db in
            try db.execute(sql: "ALTER TABLE t RENAME COLUMN id TO key; UPDATE t SET w = 3; INSERT INTO mark VALUES (1)")
        }
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        let changes = received.compactMap { $0.change(of: "t") }
        XCTAssertEqual(changes.map(\.updated), [[1], [1]])
        XCTAssertEqual(changes.map(\.reset), [true, true])
    }

    func testRenameTableByTheShell_reportsLaterRowsUnderTheNewName() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE old(id INTEGER PRIMARY KEY); INSERT INTO old VALUES (1)")
        }
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
        try await writer.write { db in
            try db.execute(
                sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE old(id INTEGER PRIMARY KEY); INSERT INTO old VALUES (1), (2)")
        }
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
        try await writer.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE wide(id INTEGER PRIMARY KEY, \(columns)); INSERT INTO wide(id, c500) VALUES (1, 'x')"
            )
        }
        try shell(
            "CREATE TABLE wide2(id INTEGER PRIMARY KEY, \(columns)); INSERT INTO wide2(id, c999) VALUES (1, 'y'); UPDATE wide SET c1000 = 'z';"
        )
        let (_, saves) = try reader("late-joiner")
        try shell("INSERT INTO mark VALUES (1)")
        _ = try await self.saves(until: 1, in: "mark", of: saves)
        try await writer.write { db in try db.execute(sql: "UPDATE wide2 SET c2 = 'w'") }
        XCTAssertNoThrow(try open("another"))
    }

    func testVacuumRenumberingRowids_isAnnouncedAsAReset() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE n(v); INSERT INTO n VALUES ('a'), ('b'), ('c'); DELETE FROM n WHERE v = 'a'"
            )
        }
        let (_, saves) = try reader()
        try shell("VACUUM", transaction: false)
        try shell("INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertTrue(folded(received, "n").reset)
        let rowids = try await writer.pool.read { db in try Int64.fetchAll(db, sql: "SELECT rowid FROM n ORDER BY rowid") }
        XCTAssertEqual(rowids, [1, 2], "VACUUM renumbered the rows")
    }

    /// What an outside writer does while no member looks, then a member joins
    /// and a write marks the end: the saves from the first mark on, and the
    /// rowids of `n` before and after.
    private func afterOutsideWork(_ work: [String]) async throws -> (saves: [Save], before: [Int64], after: [Int64]) {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE n(v); CREATE TABLE big(v);
                    INSERT INTO n VALUES ('a'), ('b'), ('c'); DELETE FROM n WHERE v = 'a';
                    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 2000) INSERT INTO big SELECT randomblob(100) FROM k;
                    """)
        }
        let (first, firstSaves) = try reader()
        try await writer.write { db in try db.execute(sql: "INSERT INTO mark VALUES (1)") }
        _ = try await self.saves(until: 1, in: "mark", of: firstSaves)
        await first.close()
        let rowids = { try await writer.pool.read { db in try Int64.fetchAll(db, sql: "SELECT rowid FROM n ORDER BY rowid") } }
        let before = try await rowids()
        for sql in work { try shell(sql, transaction: false) }
        let (_, saves) = try reader()
        try await writer.write { db in try db.execute(sql: "INSERT INTO mark VALUES (2)") }
        return (try await self.saves(until: 2, in: "mark", of: saves), before, try await rowids())
    }

    /// The capture fault trial's case: a `VACUUM` whose only trace, the schema
    /// version, is followed by an outside writer's schema change before any
    /// member looked (once missed: the schema's text had changed).
    func testAVacuumFollowedByAnOutsideSchemaChange_isAnnouncedAsAReset() async throws {
        let (saves, before, after) = try await afterOutsideWork(["VACUUM", "CREATE TABLE other(x)"])
        XCTAssertEqual([before, after], [[2, 3], [1, 2]], "VACUUM renumbered the rows")
        XCTAssertTrue(folded(saves, "n").reset, "no reset of n: \(saves)")
    }

    /// Two `VACUUM`s and then freed pages move the version by two and leave a
    /// free page, as GRDB's WAL set-up does (once taken for it, and missed).
    func testTwoVacuumsThenFreedPages_areAnnouncedAsAReset() async throws {
        let (saves, before, after) = try await afterOutsideWork(["VACUUM", "VACUUM", "DELETE FROM big"])
        XCTAssertEqual([before, after], [[2, 3], [1, 2]], "VACUUM renumbered the rows")
        XCTAssertTrue(folded(saves, "n").reset, "no reset of n: \(saves)")
    }

    /// The price of never missing one: an outside writer's schema change,
    /// `VACUUM` or not, resets the tables keyed by an implicit rowid.
    func testAnOutsideSchemaChange_resetsTheTablesKeyedByAnImplicitRowid() async throws {
        let (saves, before, after) = try await afterOutsideWork(["CREATE TABLE other(x)"])
        XCTAssertEqual(before, after)
        XCTAssertTrue(folded(saves, "n").reset, "no reset of n: \(saves)")
        XCTAssertFalse(folded(saves, "mark").reset, "mark has a key of its own: \(saves)")
    }

    /// A schema change made in a library write, and a member opening the
    /// database after every process closed it (GRDB would create and drop a
    /// table to make its WAL file), reset nothing else.
    func testALibraryWritesSchemaChange_andAReopenedDatabase_resetNoOtherTable() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE n(v); INSERT INTO n VALUES ('a')")
        }
        let (first, firstSaves) = try reader()
        try await writer.write { db in try db.execute(sql: "INSERT INTO mark VALUES (1)") }
        _ = try await self.saves(until: 1, in: "mark", of: firstSaves)
        await first.close()
        await writer.close()
        // As after every process closed it: no WAL file, or an empty one.
        try shell("PRAGMA wal_checkpoint(TRUNCATE)", transaction: false)
        let size = (try? FileManager.default.attributesOfItem(atPath: database + "-wal"))?[.size] as? Int ?? 0
        XCTAssertEqual(size, 0, "GRDB would make the WAL file again")
        let again = try open("writer")
        try await again.write { db in try db.execute(sql: "CREATE TABLE other(x); INSERT INTO mark VALUES (2)") }
        let (_, saves) = try reader()
        let received = try await self.saves(until: 2, in: "mark", of: saves)
        XCTAssertFalse(folded(received, "n").reset, "a reset of n: \(received)")
        XCTAssertTrue(folded(received, "other").reset, "a new table is announced")
    }

    func testATableCreatedUnderTheLibrarysPrefix_isNotTakenForAVacuum() async throws {
        // The cloud bridge keeps its state in groupstore_cloud_* tables, which it
        // creates in a library write: that moves the schema version by one, as
        // VACUUM does, but it is not a rewrite.
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(sql: "CREATE TABLE mark(id INTEGER PRIMARY KEY); CREATE TABLE n(v); INSERT INTO n VALUES ('a')")
        }
        let (_, saves) = try reader()
        try await writer.write { db in try db.execute(sql: "CREATE TABLE groupstore_cloud_example(key TEXT PRIMARY KEY) WITHOUT ROWID") }
        try shell("INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertFalse(received.contains { $0.change(of: "n")?.reset == true }, "no reset of n: \(received)")
    }
}
