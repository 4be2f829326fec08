import Foundation
import GRDB
import GroupStore
import Synchronization
import XCTest

/// What the history's triggers run per row, and the replacement of an older
/// generation of them when a member joins.
final class TriggerFormatTests: CaptureTestCase {
    /// The trigger steps SQLite ran during `body`: traced as `-- <step>`,
    /// beside `-- TRIGGER <name>` for each trigger called (its `WHEN` clause
    /// true or not) and `-- PRAGMA …` for table-valued pragmas.
    private func triggerSteps(_ store: GroupStore, _ body: () throws -> Void) throws -> [String] {
        let steps = Mutex<[String]>([])
        store.pool.writeWithoutTransaction { db in
            db.trace(options: .statement) { event in
                guard case .statement(let statement) = event, statement.sql.hasPrefix("-- "),
                    !statement.sql.hasPrefix("-- TRIGGER "), !statement.sql.hasPrefix("-- PRAGMA ")
                else { return }
                steps.withLock { $0.append(statement.sql) }
            }
        }
        defer { store.pool.writeWithoutTransaction { db in db.trace(options: .statement, nil) } }
        try body()
        return steps.withLock { $0 }
    }

    func testAnInsertThatCollidesWithNothing_runsOneTriggerStep_andAReplaceRunsTheBookkeepingToo() throws {
        let writer = try open("writer")
        try writer.writeBlocking { db in
            try db.execute(sql: "CREATE TABLE u(id INTEGER PRIMARY KEY, email TEXT UNIQUE, v); INSERT INTO u VALUES (1, 'a', 0)")
        }

        let plain = try triggerSteps(writer) { try writer.writeBlocking { db in try db.execute(sql: "INSERT INTO u VALUES (2, 'b', 0)") } }
        XCTAssertEqual(plain.count, 1, "an insert colliding with nothing should run the insert's record alone: \(plain)")
        XCTAssertTrue(plain.first?.hasPrefix("-- INSERT INTO groupstore_change") == true, "\(plain)")

        // Colliding with row 1 by its unique email: the pending bookkeeping runs.
        let replace = try triggerSteps(writer) {
            try writer.writeBlocking { db in try db.execute(sql: "INSERT OR REPLACE INTO u VALUES (3, 'a', 0)") }
        }
        XCTAssertGreaterThan(replace.count, 1, "a REPLACE that deletes a row should run the pending steps: \(replace)")
        let recorded = try writer.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT op, key FROM groupstore_change WHERE op IN (1, 3) ORDER BY id DESC LIMIT 2").map {
                "\($0[0] as Int) \($0[1] as Int)"
            }
        }
        XCTAssertEqual(recorded, ["1 3", "3 1"], "the REPLACE should be recorded as the delete of row 1, then the insert of row 3")
    }

    func testAGroupWithFirstGenerationTriggers_getsThemReplacedWhenAMemberJoins_withoutAReset_andCaptureStaysRight() async throws {
        let first = try open("writer")
        try await first.write { db in
            try db.execute(
                sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v); CREATE TABLE mark(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1, 0)")
        }
        await first.close()

        // The group as code of trigger format 1 left it.
        let id = try await downgradeToFirstGeneration("t")
        let resetsBefore = try await DatabaseQueue(path: database).read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM groupstore_change WHERE op = 4")!
        }

        let (_, saves) = try reader()
        let after = try await DatabaseQueue(path: database).read { db in
            (
                ar: try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'groupstore_\(id)_ar'"),
                bi: try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'groupstore_\(id)_bi'") ?? "",
                format: try Int.fetchOne(db, sql: "SELECT value FROM groupstore_meta WHERE key = 'trigger_format'"),
                resets: try Int.fetchOne(db, sql: "SELECT count(*) FROM groupstore_change WHERE op = 4")!
            )
        }
        XCTAssertNotNil(after.ar, "joining should have installed the ar trigger")
        XCTAssertTrue(after.bi.contains(" WHEN "), "joining should have replaced bi by its gated form: \(after.bi)")
        XCTAssertEqual(after.format, 6)
        XCTAssertEqual(after.resets, resetsBefore, "replacing triggers is not a change of the table: no reset")

        try shell("INSERT INTO t VALUES (2, 0); REPLACE INTO t VALUES (1, 1); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.compactMap { $0.change(of: "t") }, [EntityChange(entity: "t", inserted: [2], updated: [1])])
    }

    /// Puts back the triggers of `table` as code of trigger format 1 wrote
    /// them, and that format's meta (none), as such a member would.
    private func downgradeToFirstGeneration(_ table: String) async throws -> Int64 {
        try await DatabaseQueue(path: database).write { db -> Int64 in
            let id = try Int64.fetchOne(db, sql: "SELECT id FROM groupstore_table WHERE name = ?", arguments: [table])!
            let changes = "groupstore_change"
            try db.execute(
                sql: """
                    DROP TRIGGER groupstore_\(id)_bi; DROP TRIGGER groupstore_\(id)_ai; DROP TRIGGER groupstore_\(id)_ar;
                    CREATE TRIGGER "groupstore_\(id)_bi" BEFORE INSERT ON "t" BEGIN UPDATE \(changes) SET op = 0 WHERE op = 5 AND entity = \(id); \
                    INSERT INTO \(changes)(entity, op, key, rid) SELECT \(id), 5, c."id", NULL FROM "t" AS c WHERE (c."id" = NEW."id"); END;
                    CREATE TRIGGER "groupstore_\(id)_ai" AFTER INSERT ON "t" BEGIN UPDATE \(changes) SET op = 0 WHERE op = 5 AND entity = \(id) \
                    AND EXISTS (SELECT 1 FROM "t" AS c WHERE ((c."id" = NEW."id")) AND NOT (c.rowid = NEW.rowid) AND c."id" IS \(changes).key \
                    AND NULL IS \(changes).rid); UPDATE \(changes) SET op = 3 WHERE op = 5 AND entity = \(id); \
                    INSERT INTO \(changes)(entity, op, key, rid) VALUES (\(id), 1, NEW."id", NULL); END;
                    DELETE FROM groupstore_meta WHERE key = 'trigger_format';
                    UPDATE groupstore_meta SET value = (SELECT schema_version FROM pragma_schema_version) WHERE key = 'schema_version';
                    """)
            return id
        }
    }

    func testTriggersPutBackByOlderCode_areReplacedByARunningMember_atItsNextMerge() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v); CREATE TABLE mark(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1, 0)")
        }
        let (_, saves) = try reader()
        let id = try await downgradeToFirstGeneration("t")
        try shell("INSERT INTO t VALUES (2, 0); REPLACE INTO t VALUES (1, 1); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.compactMap { $0.change(of: "t") }, [EntityChange(entity: "t", inserted: [2], updated: [1])])
        // The merge that delivered the mark ran after the downgrade's commit.
        let after = try await DatabaseQueue(path: database).read { db in
            (
                format: try Int.fetchOne(db, sql: "SELECT value FROM groupstore_meta WHERE key = 'trigger_format'"),
                ar: try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'groupstore_\(id)_ar'")
            )
        }
        XCTAssertEqual(after.format, 6, "the running member should have put its triggers back")
        XCTAssertNotNil(after.ar, "the running member should have installed the ar trigger again")
    }
}
