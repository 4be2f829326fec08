import Foundation
import GRDB
import GroupStore
import Logging
import Subprocesses
import Synchronization
import XCTest

/// Keeps the messages logged, so a test can wait for one.
struct RecordingLogHandler: LogHandler {
    let messages: Messages
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    final class Messages: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.append(event.message.description)
    }
}

/// A member notices a restored, replaced or reset history and resyncs; joining
/// and inspecting never need another process's write lock for long.
final class GroupIdentityTests: CaptureTestCase {
    private func nextSave(_ saves: SaveStream) async throws -> Save {
        try await first(1, of: saves)[0]
    }

    func testARestoredOlderDatabase_givesRestartedMembersAResync_thenNewSaves() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        let (member, _) = try reader()
        await member.close()
        await writer.close()
        let backup = group + "/backup.sqlite"
        try shell("VACUUM INTO '\(backup)'", transaction: false)

        let writer2 = try open("writer2")
        for key in 2...6 { try await writer2.write { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [key]) } }
        let (member2, saves2) = try reader()
        _ = try await first(5, of: saves2)
        await member2.close()
        await writer2.close()

        // The operator restores the older copy while everything is stopped.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        try FileManager.default.moveItem(atPath: backup, toPath: database)
        try shell("INSERT INTO t VALUES (100)")  // a commit reusing a sequence number the member saw

        let (_, saves3) = try reader()
        let resync = try await nextSave(saves3)
        XCTAssertEqual(resync.kind, .resync, "got \(resync)")
        let writer3 = try open("writer3")
        try await writer3.write { db in try db.execute(sql: "INSERT INTO t VALUES (200)") }
        let next = try await nextSave(saves3)
        XCTAssertEqual(next.change(of: "t")?.inserted, [200])
    }

    func testAHistoryEmptiedByHandWhileMembersRun_givesAResync_thenNewSaves() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let (_, saves) = try reader()
        for key in 1...3 { try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [key]) } }
        _ = try await first(3, of: saves)
        try shell("DELETE FROM groupstore_change")
        let four = try await writer.writeWithSequence { db in try db.execute(sql: "INSERT INTO t VALUES (4)") }
        let fourSeq = try XCTUnwrap(four.seq)
        // A resync comes first. If the member noticed the emptied history only
        // after the insert, the resync covers it (refetch everything);
        // otherwise the insert follows as a save of its own.
        let resync = try await first(1, of: saves)[0]
        XCTAssertEqual(resync.kind, .resync, "got \(resync)")
        if resync.seq < fourSeq {
            let next = try await first(1, of: saves)[0]
            XCTAssertEqual(next.change(of: "t")?.inserted, [4])
        }
    }

    func testAReplacedDatabaseOfAnotherGroup_givesARestartedMemberAResync() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        let (member, _) = try reader()
        await member.close()
        await writer.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        let other = try open("other")
        for key in 1...5 {
            try await other.write { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (?)", arguments: [key])
            }
        }
        let (_, saves) = try reader()
        let first = try await nextSave(saves)
        XCTAssertEqual(first.kind, .resync)
    }

    func testJoiningWhileTheShellHoldsAWriteTransaction_waitsThenJoinsWithItsCommit() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let holder = try Subprocess(URL(fileURLWithPath: "/usr/bin/sqlite3"), [database], name: "holder")
        defer { holder.stop() }
        holder.writeLine("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); SELECT 'holding';")
        XCTAssertNotNil(
            holder.wait(timeout: 20) { output, _, _ in output.contains("holding") ? true : nil }, "the shell never took the lock")

        // A member with nothing to write joins at once, and inspection answers.
        let plain = try open("plain")
        let inspector = try GroupInspector(directory: group)
        XCTAssertNoThrow(try inspector.status())
        XCTAssertNoThrow(try inspector.history(after: 0))

        // A member whose migration must write waits for the lock, then joins.
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v2") { db in try db.execute(sql: "CREATE TABLE extra(id INTEGER PRIMARY KEY)") }
        let messages = RecordingLogHandler.Messages()
        var configuration = GroupConfiguration(
            directory: group, member: try MemberName("migrating"),
            logger: Logger(label: "test") { _ in RecordingLogHandler(messages: messages) })
        configuration.migrator = migrator
        configuration.busyTimeout = 0.5
        configuration.pruneInterval = nil
        let opening = Task { [configuration] in try await GroupStore.open(configuration) }
        // It outlasts its busy timeout, waiting, rather than failing.
        let deadline = Date().addingTimeInterval(30)
        while !messages.contains("waiting for another process") && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertTrue(messages.contains("waiting for another process"), "the join never waited for the lock")
        holder.writeLine("COMMIT;")
        let migrated = try await opening.value
        defer { migrated.closeBlocking() }
        let count = try await migrated.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        XCTAssertEqual(count, 1)
        let migratedTable = try await migrated.pool.read { db in try db.tableExists("extra") }
        XCTAssertTrue(migratedTable)
        _ = plain
    }
}
