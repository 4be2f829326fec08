import Foundation
import GRDB
import GroupStore
import XCTest

/// A group whose history is of format 2 (transactions in a table of their
/// own) is upgraded in place to format 3 (marker rows) when a member joins;
/// a history of a newer format than the code's is refused.
final class HistoryUpgradeTests: CaptureTestCase {
    private func nextSave(_ saves: SaveStream) async throws -> Save {
        try await first(1, of: saves)[0]
    }

    /// Turns the history back into format 2, as code of that format left it:
    /// a table of transactions whose `last_change` is each one's last row.
    private func downgradeToFormat2() throws {
        try shell(
            """
            CREATE TABLE groupstore_transaction_2(seq INTEGER PRIMARY KEY, author TEXT, committed_at REAL NOT NULL, last_change INTEGER NOT NULL);
            INSERT INTO groupstore_transaction_2 SELECT id, key, rid / 1e6, id FROM groupstore_change WHERE op = 6;
            DROP VIEW groupstore_transaction;
            ALTER TABLE groupstore_transaction_2 RENAME TO groupstore_transaction;
            UPDATE groupstore_meta SET value = 2 WHERE key = 'format'
            """)
    }

    private func meta(_ key: String) throws -> String? {
        let queue = try DatabaseQueue(path: database)
        return try queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM groupstore_meta WHERE key = ?", arguments: [key]) }
    }

    func testAFormat2History_isUpgraded_aMemberThatReadEverythingGoesOn_andOneBehindResyncs() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        let (behind, _) = try reader("behind")
        await behind.close()
        // A member that processed everything (a handler's saves count as
        // processed once it returns), its cursor file at the head.
        let ahead = try open("ahead") { configuration in
            configuration.synchronousDelivery = { _ in }
            configuration.cursorFlushInterval = 0.001
        }
        try ahead.start()
        try await writeSeq(writer, "INSERT INTO t VALUES (2)")
        let oldHead = try await writeSeq(writer, "INSERT INTO t VALUES (3)")
        _ = try await waitForCursorFile(of: "ahead", at: oldHead)
        await ahead.close()
        await writer.close()
        let epoch = try meta("epoch")
        try downgradeToFormat2()

        let (_, aheadSaves) = try reader("ahead")
        let writer2 = try open("writer2")
        let four = try await writer2.writeWithSequence { db in try db.execute(sql: "INSERT INTO t VALUES (4)") }
        let next = try await nextSave(aheadSaves)
        XCTAssertEqual(next.kind, .transaction, "a member that had read everything was sent \(next)")
        XCTAssertEqual(next.change(of: "t")?.inserted, [4])
        XCTAssertEqual(next.seq, four.seq)
        XCTAssertGreaterThan(next.seq, oldHead, "a sequence number went back")

        let (_, behindSaves) = try reader("behind")
        let resync = try await nextSave(behindSaves)
        XCTAssertEqual(resync.kind, .resync, "a member behind the dropped history got \(resync)")

        XCTAssertEqual(try meta("format"), "3")
        XCTAssertEqual(try meta("epoch"), epoch, "the upgrade must keep the history's epoch (members' cursors stay valid)")
        XCTAssertEqual(try meta("pruned_through"), String(oldHead))
        let queue = try DatabaseQueue(path: database)
        let type = try await queue.read { db in try String.fetchOne(db, sql: "SELECT type FROM sqlite_master WHERE name = 'groupstore_transaction'") }
        XCTAssertEqual(type, "view")
        let listed = try await queue.read { db in try Int64.fetchAll(db, sql: "SELECT seq FROM groupstore_transaction WHERE seq > ?", arguments: [oldHead]) }
        XCTAssertEqual(listed.last, four.seq, "the view lists the transactions after the upgrade")
    }

    func testChangesNoTransactionClosedBeforeTheUpgrade_giveEveryMemberAResync() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        let (member, saves) = try reader()
        try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        _ = try await first(1, of: saves)
        await member.close()
        await writer.close()
        try downgradeToFormat2()
        // An outside commit no transaction closed yet: its change rows follow
        // the newest transaction's last_change, and the upgrade drops them.
        try shell("INSERT INTO t VALUES (50)")

        let (_, after) = try reader()
        let resync = try await nextSave(after)
        XCTAssertEqual(resync.kind, .resync, "a member would miss the outside commit: got \(resync)")
        XCTAssertEqual(try meta("pruned_through"), String(resync.seq))
    }

    func testAHistoryOfANewerFormat_isRefusedWithItsPath_andLeftAsItIs() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        await writer.close()
        try shell("UPDATE groupstore_meta SET value = 4 WHERE key = 'format'")
        XCTAssertThrowsError(try open("late")) { error in
            guard let error = error as? GroupStoreError else { return XCTFail("not a GroupStoreError: \(error)") }
            XCTAssertEqual(error.code, .database)
            XCTAssertTrue(error.message.contains("format 4"), error.message)
            XCTAssertTrue(error.message.contains(self.database), error.message)
        }
        XCTAssertEqual(try meta("format"), "4")
        let queue = try DatabaseQueue(path: database)
        let rows = try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        XCTAssertEqual(rows, 1)
    }
}
