import Foundation
import GRDB
import GroupStore
import XCTest

/// Conflict resolution: rows a REPLACE removes are reported, whoever writes.
final class ReplaceCaptureTests: CaptureTestCase {
    private func prepare() async throws -> (GroupStore, SaveStream, GroupStore) {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE u(id INTEGER PRIMARY KEY, email TEXT UNIQUE, v);
                    CREATE TABLE mark(id INTEGER PRIMARY KEY);
                    INSERT INTO u VALUES (1, 'a', 0), (2, 'b', 0);
                    """)
        }
        let (store, saves) = try reader()
        return (store, saves, writer)
    }

    /// A writer that created the tables of `schema` and `mark`, and a
    /// started reader's saves.
    private func prepare(_ schema: String) async throws -> (GroupStore, SaveStream) {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: schema + "; CREATE TABLE mark(id INTEGER PRIMARY KEY)") }
        let (_, saves) = try reader()
        return (writer, saves)
    }

    /// The delete rows (op 3) in the history of `tables`.
    private func recordedDeletes(in tables: [String], _ store: GroupStore) async throws -> Int? {
        let names = tables.map { "'\($0)'" }.joined(separator: ", ")
        return try await store.pool.read { db in
            try Int.fetchOne(
                db,
                sql:
                    "SELECT count(*) FROM groupstore_change WHERE op = 3 AND entity IN (SELECT id FROM groupstore_table WHERE name IN (\(names)))"
            )
        }
    }

    func testInsertOrReplaceOnAUniqueColumn_reportsTheRowItDeleted_fromTheShell() async throws {
        let (_, saves, _) = try await prepare()
        try shell("INSERT OR REPLACE INTO u VALUES (3, 'a', 0); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.last?.change(of: "u"), EntityChange(entity: "u", inserted: [3], deleted: [1]))
    }

    func testInsertOrReplaceOnAUniqueColumn_reportsTheRowItDeleted_fromTheLibrary() async throws {
        let (_, saves, writer) = try await prepare()
        try await writer.write { db in try db.execute(sql: "INSERT OR REPLACE INTO u VALUES (3, 'a', 0); INSERT INTO mark VALUES (1)") }
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.last?.change(of: "u"), EntityChange(entity: "u", inserted: [3], deleted: [1]))
    }

    func testReplacingAnExistingKey_isReportedAsUpdated() async throws {
        let (_, saves, _) = try await prepare()
        try shell("INSERT OR REPLACE INTO u VALUES (2, 'z', 1); REPLACE INTO u VALUES (1, 'y', 1); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.last?.change(of: "u"), EntityChange(entity: "u", updated: [2, 1]))
    }

    func testReplaceCollidingWithTwoRows_reportsBoth() async throws {
        let (_, saves, _) = try await prepare()
        // Key 1 collides by id, 'b' (row 2) by email: both go.
        try shell("INSERT OR REPLACE INTO u VALUES (1, 'b', 9); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.last?.change(of: "u"), EntityChange(entity: "u", updated: [1], deleted: [2]))
    }

    func testUpdateOrReplace_reportsTheRowItDeleted() async throws {
        let (_, saves, _) = try await prepare()
        // Each outside transaction is seen before the next (else a peer may
        // see them as one: triggers cannot tell outside commits apart).
        try shell("UPDATE OR REPLACE u SET email = 'a' WHERE id = 2; INSERT INTO mark VALUES (1)")
        var received = try await self.saves(until: 1, in: "mark", of: saves)
        try shell("UPDATE OR REPLACE u SET id = 5 WHERE id = 2; INSERT INTO mark VALUES (2)")
        received += try await self.saves(until: 2, in: "mark", of: saves)
        let changes = received.compactMap { $0.change(of: "u") }
        XCTAssertEqual(
            changes, [EntityChange(entity: "u", updated: [2], deleted: [1]), EntityChange(entity: "u", inserted: [5], deleted: [2])])
    }

    func testARowWithRowidMinusOne_isNotReportedDeleted_byInsertsThatLetSQLiteChooseTheRowid() async throws {
        let (writer, saves) = try await prepare("CREATE TABLE n(id INTEGER PRIMARY KEY, v); CREATE TABLE r(v)")
        // In a before-insert trigger, a rowid SQLite has yet to choose reads
        // −1: the row whose rowid is −1 looks like a collision, but is kept.
        try shell(
            "INSERT INTO n VALUES (-1, 'a'); INSERT INTO n(v) VALUES ('b'); INSERT INTO r(rowid, v) VALUES (-1, 'a'); INSERT INTO r(v) VALUES ('b'); INSERT INTO mark VALUES (1)"
        )
        var received = try await self.saves(until: 1, in: "mark", of: saves)
        try await writer.write { db in
            try db.execute(sql: "INSERT INTO n(v) VALUES ('c'); INSERT INTO r(v) VALUES ('c'); INSERT INTO mark VALUES (2)")
        }
        received += try await self.saves(until: 2, in: "mark", of: saves)
        // Replacing −1 itself still deletes it and inserts it again: an update.
        try shell("REPLACE INTO n VALUES (-1, 'z'); REPLACE INTO r(rowid, v) VALUES (-1, 'z'); INSERT INTO mark VALUES (3)")
        received += try await self.saves(until: 3, in: "mark", of: saves)
        for table in ["n", "r"] {
            XCTAssertEqual(
                received.compactMap { $0.change(of: table) },
                [
                    EntityChange(entity: table, inserted: [-1, 0]), EntityChange(entity: table, inserted: [1]),
                    EntityChange(entity: table, updated: [-1]),
                ], "table \(table)")
        }
        let rows = try await writer.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM n) + (SELECT count(*) FROM r)")
        }
        XCTAssertEqual(rows, 6, "every row reported is in the tables")
    }

    func testRowidsNamedInATableWithADeclaredKey_collideAndMove_andEveryRowDeletedIsReported() async throws {
        let (writer, saves) = try await prepare("CREATE TABLE c(k1 TEXT, k2 INT, v, PRIMARY KEY(k1, k2))")
        func key(_ k1: String?, _ k2: Int64) -> KeyValue { .composite([k1.map { .text($0) } ?? .null, .integer(k2)]) }
        var received: [[EntityChange]] = []
        func step(_ sql: String, _ mark: Int64) async throws {
            try shell(sql + "; INSERT INTO mark VALUES (\(mark))")
            received.append(try await self.saves(until: .integer(mark), in: "mark", of: saves).compactMap { $0.change(of: "c") })
        }
        try await step("INSERT INTO c(rowid, k1, k2, v) VALUES (1, 'p', 1, 0), (2, 'q', 2, 0), (3, NULL, 3, 0), (-1, 'm', 1, 0)", 1)
        // A REPLACE colliding by rowid alone deletes the row that held it.
        try await step("REPLACE INTO c(rowid, k1, k2, v) VALUES (1, 's', 4, 0)", 2)
        // So does an UPDATE OR REPLACE that moves a row onto a taken rowid.
        try await step("UPDATE OR REPLACE c SET rowid = 2 WHERE k1 = 's'", 3)
        // An ignored insert leaves pending rows; moving a row whose key holds
        // NULL to a new rowid must not turn them into deletes.
        try await step("INSERT OR IGNORE INTO c(k1, k2, v) VALUES ('m', 1, 9)", 4)
        try await step("UPDATE c SET rowid = 7 WHERE k2 = 3", 5)
        // Inserts that let SQLite choose the rowid keep the row whose rowid is −1.
        try await step("INSERT INTO c(k1, k2, v) VALUES ('t', 5, 0)", 6)
        XCTAssertEqual(
            received,
            [
                [EntityChange(entity: "c", inserted: [key("p", 1), key("q", 2), .rowid(3), key("m", 1)])],
                [EntityChange(entity: "c", inserted: [key("s", 4)], deleted: [key("p", 1)])],
                [EntityChange(entity: "c", updated: [key("s", 4)], deleted: [key("q", 2)])],
                [],
                [EntityChange(entity: "c", inserted: [.rowid(7)], deleted: [.rowid(3)])],
                [EntityChange(entity: "c", inserted: [key("t", 5)])],
            ])
        let rows = try await writer.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM c") }
        XCTAssertEqual(rows, 4, "what was reported inserted and not deleted is in the table")
        // Transactions already delivered are never rewritten: the history
        // holds the three deletes reported, and no other.
        let deletes = try await recordedDeletes(in: ["c"], writer)
        XCTAssertEqual(deletes, 3, "delete rows in the history of c")
    }

    func testAKeyChangedOnlyInItsRecordedForm_turnsNoLeftoverPendingRowIntoADelete() async throws {
        let (writer, saves) = try await prepare(
            "CREATE TABLE q(a TEXT COLLATE NOCASE, b INT, v, PRIMARY KEY(a, b)); CREATE TABLE p(a, b, v, PRIMARY KEY(a, b))")
        try shell("INSERT INTO q VALUES ('x', 1, 0), ('y', 2, 0); INSERT INTO p VALUES (1, 1, 0), (2, 2, 0); INSERT INTO mark VALUES (1)")
        _ = try await self.saves(until: 1, in: "mark", of: saves)
        // Ignored inserts leave pending rows behind...
        try shell("INSERT OR IGNORE INTO q VALUES ('y', 2, 9); INSERT OR IGNORE INTO p VALUES (2, 2, 9); INSERT INTO mark VALUES (2)")
        let ignored = try await self.saves(until: 2, in: "mark", of: saves)
        // ...then keys move to values equal under IS (the collation, numeric
        // equality) but recorded differently: a delete and an insert.
        try shell("UPDATE q SET a = 'X' WHERE b = 1; UPDATE p SET a = 1.0 WHERE a = 1; INSERT INTO mark VALUES (3)")
        let moved = try await self.saves(until: 3, in: "mark", of: saves)
        XCTAssertEqual(ignored.compactMap { $0.change(of: "q") ?? $0.change(of: "p") }, [])
        let q = folded(moved, "q")
        XCTAssertEqual(q.inserted, [.composite([.text("X"), .integer(1)])])
        XCTAssertEqual(q.deleted, [.composite([.text("x"), .integer(1)])])
        let p = folded(moved, "p")
        XCTAssertEqual(p.inserted, [.composite([.real(1), .integer(1)])])
        XCTAssertEqual(p.deleted, [.composite([.integer(1), .integer(1)])])
        // The ignored inserts' transaction, delivered already, stays empty:
        // one delete in the history of each table, the key's old form.
        let deletes = try await recordedDeletes(in: ["q", "p"], writer)
        XCTAssertEqual(deletes, 2, "delete rows in the history of q and p")
    }

    func testASingleKeyChangedOnlyInItsRecordedForm_isADeleteAndAnInsert() async throws {
        let (_, saves) = try await prepare(
            "CREATE TABLE h(a COLLATE NOCASE PRIMARY KEY, u UNIQUE, v) WITHOUT ROWID; CREATE TABLE k(id PRIMARY KEY, v)")
        try shell("INSERT INTO h VALUES ('x', 1, 0); INSERT INTO k VALUES (1, 0); INSERT INTO mark VALUES (1)")
        _ = try await self.saves(until: 1, in: "mark", of: saves)
        // Equal under IS (the collation, numeric equality), not as recorded:
        // a follower keyed by the recorded key must drop the old one.
        try shell("UPDATE h SET a = upper(a); UPDATE k SET id = id + 0.0; INSERT INTO mark VALUES (2)")
        let moved = try await self.saves(until: 2, in: "mark", of: saves)
        let h = folded(moved, "h")
        XCTAssertEqual(h.inserted, [.text("X")])
        XCTAssertEqual(h.deleted, [.text("x")])
        XCTAssertEqual(h.updated, [])
        let k = folded(moved, "k")
        XCTAssertEqual(k.inserted, [.real(1)])
        XCTAssertEqual(k.deleted, [.integer(1)])
        XCTAssertEqual(k.updated, [])
    }

    func testAWriterWithRecursiveTriggersOn_getsTheSameReportForAReplace() async throws {
        let (_, saves, _) = try await prepare()
        // Delete triggers then fire for the rows a REPLACE removes, beside
        // the pending bookkeeping: each such delete is recorded twice.
        try shell(
            "PRAGMA recursive_triggers = ON; BEGIN; REPLACE INTO u VALUES (1, 'b', 5); INSERT INTO mark VALUES (1); COMMIT;",
            transaction: false)
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.compactMap { $0.change(of: "u") }, [EntityChange(entity: "u", updated: [1], deleted: [2])])
    }

    func testUpsertThatUpdates_andInsertOrIgnore_reportNoPhantomDeletes() async throws {
        let (_, saves, _) = try await prepare()
        try shell(
            """
            INSERT INTO u VALUES (2, 'q', 5) ON CONFLICT(id) DO UPDATE SET v = excluded.v;
            INSERT OR IGNORE INTO u VALUES (9, 'a', 0);
            INSERT INTO u VALUES (1, 'x', 0) ON CONFLICT DO NOTHING;
            INSERT INTO mark VALUES (1);
            """)
        var received = try await self.saves(until: 1, in: "mark", of: saves)
        // The first transaction ended with rows left pending by the ignored
        // inserts; the next one must not reuse their ids.
        try shell("INSERT INTO u VALUES (10, 'c', 0)")
        try shell("INSERT INTO mark VALUES (2)")
        received += try await self.saves(until: 2, in: "mark", of: saves)
        let changes = received.compactMap { $0.change(of: "u") }
        XCTAssertEqual(changes, [EntityChange(entity: "u", updated: [2]), EntityChange(entity: "u", inserted: [10])])
    }

    /// Found while documenting: an ignored insert left a pending row as the
    /// newest change; deleting it let SQLite reuse its id for the next change,
    /// inside the transaction already closed, so that change was never delivered.
    func testAChangeRightAfterAnIgnoredInsert_isATransactionOfItsOwn() async throws {
        let (_, saves, writer) = try await prepare()
        let ignored = try await writer.writeWithSequence { db in try db.execute(sql: "INSERT OR IGNORE INTO u VALUES (9, 'a', 0)") }
        let next = try await writer.writeWithSequence { db in try db.execute(sql: "INSERT INTO u VALUES (10, 'c', 0)") }
        XCTAssertNotNil(next.seq, "the insert was recorded in no transaction of its own")
        XCTAssertNotEqual(next.seq, ignored.seq)
        try await writer.write { db in try db.execute(sql: "INSERT INTO mark VALUES (1)") }
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(folded(received, "u").inserted, [10])
    }

    func testConstraintDeclaredOnConflictReplace_withACollation_reportsTheRowItDeleted() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE p(code TEXT PRIMARY KEY, name TEXT COLLATE NOCASE UNIQUE ON CONFLICT REPLACE);
                    CREATE TABLE mark(id INTEGER PRIMARY KEY);
                    INSERT INTO p VALUES ('a', 'Alice'), ('b', 'Bob');
                    """)
        }
        let (_, saves) = try reader()
        try shell("INSERT INTO p VALUES ('c', 'ALICE'); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(received.last?.change(of: "p"), EntityChange(entity: "p", inserted: ["c"], deleted: ["a"]))
    }

    func testReplaceInAWithoutRowidTable_reportsTheRowItDeleted() async throws {
        let writer = try open("writer")
        try await writer.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE w(a TEXT, b INT, tag TEXT UNIQUE, PRIMARY KEY (a, b)) WITHOUT ROWID;
                    CREATE TABLE mark(id INTEGER PRIMARY KEY);
                    INSERT INTO w VALUES ('x', 1, 't1'), ('y', 2, 't2');
                    """)
        }
        let (_, saves) = try reader()
        try shell("REPLACE INTO w VALUES ('z', 3, 't1'); REPLACE INTO w VALUES ('y', 2, 't9'); INSERT INTO mark VALUES (1)")
        let received = try await self.saves(until: 1, in: "mark", of: saves)
        XCTAssertEqual(
            received.last?.change(of: "w"),
            EntityChange(
                entity: "w", inserted: [.composite(["z", 3])], updated: [.composite(["y", 2])], deleted: [.composite(["x", 1])]))
    }
}
