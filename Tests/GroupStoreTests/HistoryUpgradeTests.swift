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
    /// transactions numbered 1, 2, 3… in a table of their own, each with the
    /// id of its last change row, and no marker rows; members' cursor files
    /// renumbered the same way.
    /// - Returns: the newest format-2 sequence number.
    @discardableResult
    private func downgradeToFormat2() throws -> Int64 {
        let markers = try DatabaseQueue(path: database).read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM groupstore_change WHERE op = 6 ORDER BY id")
        }
        try shell(
            """
            CREATE TABLE groupstore_transaction_2(seq INTEGER PRIMARY KEY, author TEXT, committed_at REAL NOT NULL, last_change INTEGER NOT NULL);
            INSERT INTO groupstore_transaction_2(author, committed_at, last_change)
              SELECT key, rid / 1e6, (SELECT max(c.id) FROM groupstore_change AS c WHERE c.id < m.id AND c.op <> 6)
              FROM groupstore_change AS m WHERE m.op = 6 ORDER BY m.id;
            DELETE FROM groupstore_change WHERE op = 6;
            DROP VIEW groupstore_transaction;
            ALTER TABLE groupstore_transaction_2 RENAME TO groupstore_transaction;
            UPDATE groupstore_meta SET value = 2 WHERE key = 'format'
            """)
        let members = group + "/members"
        for member in try FileManager.default.contentsOfDirectory(atPath: members) {
            let path = "\(members)/\(member)/cursor"
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            var fields = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            let position = try XCTUnwrap(Int64(fields[0]))
            fields[0] = String(markers.filter { $0 <= position }.count)
            try fields.joined(separator: " ").write(toFile: path, atomically: true, encoding: .utf8)
        }
        return Int64(markers.count)
    }

    /// The first column of the first row `sql` reads, as an integer.
    private func integer(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> Int64? {
        try DatabaseQueue(path: database).read { db in try Int64.fetchOne(db, sql: sql, arguments: arguments) }
    }

    private func meta(_ key: String) throws -> String? {
        try DatabaseQueue(path: database).read { db in
            try String.fetchOne(db, sql: "SELECT value FROM groupstore_meta WHERE key = ?", arguments: [key])
        }
    }

    /// A member whose cursor file reaches the head: a handler's saves count
    /// as processed once it returns.
    private func processingMember(_ name: String) throws -> GroupStore {
        let member = try open(name) { configuration in
            configuration.synchronousDelivery = { _ in }
            configuration.cursorFlushInterval = 0.001
        }
        try member.startBlocking()
        return member
    }

    func testAFormat2History_isUpgraded_aMemberThatReadEverythingGoesOn_andOneBehindResyncs() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        let (behind, _) = try reader("behind")
        await behind.close()
        let ahead = try processingMember("ahead")
        try await writeSeq(writer, "INSERT INTO t VALUES (2)")
        let head = try await writeSeq(writer, "INSERT INTO t VALUES (3)")
        _ = try await waitForCursorFile(of: "ahead", at: head)
        await ahead.close()
        await writer.close()
        let newestChange = try XCTUnwrap(try integer("SELECT max(id) FROM groupstore_change"))
        let epoch = try meta("epoch")
        let formatTwoHead = try downgradeToFormat2()
        XCTAssertEqual(formatTwoHead, 3)
        XCTAssertThrowsError(try GroupInspector(directory: group).status()) { error in
            XCTAssertTrue("\(error)".contains("format 2"), "\(error)")
            XCTAssertTrue("\(error)".contains(self.database), "\(error)")
        }

        let (_, aheadSaves) = try reader("ahead")
        let writer2 = try open("writer2")
        let four = try await writeSeq(writer2, "INSERT INTO t VALUES (4)")
        let next = try await nextSave(aheadSaves)
        XCTAssertEqual(next.kind, .transaction, "a member that had read everything was sent \(next)")
        XCTAssertEqual(next.change(of: "t")?.inserted, [4])
        XCTAssertEqual(next.seq, four)
        XCTAssertGreaterThan(four, newestChange, "a change id or sequence number went back")

        let (_, behindSaves) = try reader("behind")
        let resync = try await nextSave(behindSaves)
        XCTAssertEqual(resync.kind, .resync, "a member behind the dropped history got \(resync)")

        XCTAssertEqual(try meta("format"), "3")
        XCTAssertEqual(try meta("epoch"), epoch, "the upgrade must keep the history's epoch (members' cursors stay valid)")
        XCTAssertEqual(try meta("pruned_through"), "3")
        let queue = try DatabaseQueue(path: database)
        let type = try await queue.read { db in
            try String.fetchOne(db, sql: "SELECT type FROM sqlite_master WHERE name = 'groupstore_transaction'")
        }
        XCTAssertEqual(type, "view")
        let listed = try await queue.read { db in try Int64.fetchAll(db, sql: "SELECT seq FROM groupstore_transaction") }
        XCTAssertEqual(listed.last, four, "the view lists the transactions after the upgrade")
        let status = try GroupInspector(directory: group).status()
        XCTAssertEqual(status.head, four)
        XCTAssertEqual(status.historyTransactions, 2, "the upgrade's marker, then the insert's")
    }

    func testAnOutsideCommitNotClosedBeforeTheUpgrade_isDeliveredAfterIt() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        let member = try processingMember("reader")
        let head = try await writeSeq(writer, "INSERT INTO t VALUES (2)")
        _ = try await waitForCursorFile(of: "reader", at: head)
        await member.close()
        await writer.close()
        try downgradeToFormat2()
        // An outside commit no transaction closed yet: its change rows follow
        // the newest transaction's last_change.
        try shell("INSERT INTO t VALUES (50); INSERT INTO t VALUES (51)")

        let (_, after) = try reader()
        let save = try await nextSave(after)
        XCTAssertEqual(save.kind, .transaction, "got \(save)")
        XCTAssertEqual(save.author, Save.externalAuthor)
        XCTAssertEqual(save.change(of: "t")?.inserted, [50, 51])
    }

    func testAHistoryOfANewerFormat_isRefusedWithItsPath_andLeftAsItIs() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        await writer.close()
        try shell("UPDATE groupstore_meta SET value = 4 WHERE key = 'format'")
        for attempt in [{ _ = try self.open("late") }, { _ = try GroupInspector(directory: self.group) }] {
            XCTAssertThrowsError(try attempt()) { error in
                guard let error = error as? GroupStoreError else { return XCTFail("not a GroupStoreError: \(error)") }
                XCTAssertEqual(error.code, .database)
                XCTAssertTrue(error.message.contains("format 4"), error.message)
                XCTAssertTrue(error.message.contains(self.database), error.message)
            }
        }
        XCTAssertEqual(try meta("format"), "4")
        let rows = try await DatabaseQueue(path: database).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        XCTAssertEqual(rows, 1)
    }

    // MARK: - Cursors that are not a marker's id

    func testPruningPastACursorThatIsNoMarker_removesOnlyWholeTransactions() async throws {
        let writer = try open("writer") { $0.writesOnly = true }
        let first = try await writeSeq(writer, "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let (member, _) = try reader("b")
        await member.close()
        let second = try await writeSeq(writer, "INSERT INTO t VALUES (2)")
        // A cursor just before the second transaction's marker, as a reader
        // in another language (or older code) may keep: everything before
        // that transaction is handled, the transaction itself is not.
        let epoch = try XCTUnwrap(try meta("epoch"))
        try "\(second - 1) \(epoch) -\n".write(toFile: group + "/members/b/cursor", atomically: true, encoding: .utf8)
        let janitor = try open("janitor") { $0.writesOnly = true }
        let report = try janitor.prune()
        XCTAssertEqual(report.prunedThrough, first, "pruning must stop at the newest whole transaction")

        let (_, saves) = try reader("b")
        let save = try await nextSave(saves)
        XCTAssertEqual(save.kind, .transaction, "got \(save)")
        XCTAssertEqual(save.seq, second)
        XCTAssertEqual(save.change(of: "t")?.inserted, [2], "the transaction's change was pruned with the cursor's row")
    }

    func testARestoredDatabaseWhereTheCursorNamesAChangeRow_givesAResync() async throws {
        let writer = try open("writer")
        let first = try await writeSeq(writer, "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let backup = group + "/backup.sqlite"
        try shell("VACUUM INTO '\(backup)'", transaction: false)
        let member = try processingMember("reader")
        var head = first
        for key in 2...6 { head = try await writeSeq(writer, "INSERT INTO t VALUES (\(key))") }
        _ = try await waitForCursorFile(of: "reader", at: head)
        await member.close()
        await writer.close()

        // The older copy comes back, and an outside writer commits enough
        // rows that the member's cursor now names one of its change rows.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        try FileManager.default.moveItem(atPath: backup, toPath: database)
        let rows = Int(head - first) + 2
        try shell("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows)) INSERT INTO t SELECT i + 100 FROM n")
        let op = try integer("SELECT op FROM groupstore_change WHERE id = ?", [head])
        XCTAssertEqual(op, 1, "the cursor should name an insert's row")

        let (_, saves) = try reader()
        let resync = try await nextSave(saves)
        XCTAssertEqual(resync.kind, .resync, "a member of another history's cursor got \(resync)")
    }
}
