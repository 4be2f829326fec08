import Foundation
import GRDB
import GroupStore
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import XCTest

/// One lifecycle a newcomer cannot get wrong: subscribe, start and close in
/// any order, from any callback.
final class LifecycleTests: StoreTestCase {
    private func makeTable(_ writer: GroupStore) async throws {
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
    }

    private func insert(_ writer: GroupStore, _ ids: ClosedRange<Int>) async throws {
        for id in ids { try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [id]) } }
    }

    private func keys(_ saves: [Save]) -> [KeyValue] {
        saves.flatMap { $0.change(of: "t")?.inserted ?? [] }
    }

    func testSubscribingAfterStartAndAnAwait_stillGetsTheSavesCommittedWhileDown() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let before = try open("reader")
        try await before.start()
        await before.close()
        try await insert(writer, 1...5)

        let reader = try open("reader")
        try await reader.start()
        _ = try await reader.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        try await Task.sleep(for: .milliseconds(50))  // the habit under test: subscribing late
        let received = try await first(5, of: reader.saves())
        XCTAssertEqual(keys(received), [1, 2, 3, 4, 5])
    }

    func testTwoSubscribers_eachGetEverySave_andALateOneStartsAfterWhatWasProcessed() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let reader = try open("reader")
        let early = reader.saves()
        try await reader.start()
        try await insert(writer, 1...3)
        let fromEarly = try await first(3, of: early)
        XCTAssertEqual(keys(fromEarly), [1, 2, 3])
        // The early loop stopped with save 3 in hand, unprocessed: a new
        // subscriber starts there.
        let late = reader.saves()
        try await insert(writer, 4...4)
        let fromLate = try await first(2, of: late)
        XCTAssertEqual(keys(fromLate), [3, 4])
    }

    func testASubscriberFarSlowerThanTheBuffer_getsEverySaveInOrder_fromTheHistory() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let reader = try open("reader")
        let slow = reader.saves()
        try await reader.start()
        let count = 1_500  // more than the in-memory buffer holds
        try await writer.write { _ in }
        for id in 1...count { try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [id]) } }
        let received = try await first(count, of: slow, timeout: 60)
        XCTAssertEqual(keys(received), (1...count).map { KeyValue.integer(Int64($0)) })
        XCTAssertEqual(received.map(\.seq), received.map(\.seq).sorted())
    }

    func testEveryAPI_fromDidSaveObserversOnEveryKindOfQueue_neitherCrashesNorHangs() throws {
        for queue in [nil, OperationQueue(), OperationQueue.main] {
            try setUpWithError()
            let writer = try open("writer")
            try writer.writeBlocking { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
            let reader = try open("reader")
            let done = expectation(description: "observer on \(queue.map { $0 == .main ? "main" : "private" } ?? "nil") ran every API")
            let token = NotificationCenter.default.addObserver(forName: .groupStoreDidSave, object: reader, queue: queue) { _ in
                _ = reader.cursor
                _ = reader.groupReplacedError
                _ = try? reader.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
                try? reader.writeBlocking { db in try db.execute(sql: "INSERT OR IGNORE INTO t VALUES (1000)") }
                reader.flushPublicationsBlocking()
                _ = try? reader.prune()
                reader.saves().cancel()
                try? reader.startBlocking()
                reader.closeBlocking()
                done.fulfill()
            }
            defer { NotificationCenter.default.removeObserver(token) }
            try reader.startBlocking()
            try writer.writeBlocking { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
            // Waiting spins the main run loop, so the main-queue observer runs too.
            wait(for: [done], timeout: 20)
            XCTAssertThrowsError(try reader.writeBlocking { _ in }) { XCTAssertEqual(($0 as? GroupStoreError)?.code, .closed) }
            try tearDownWithError()
        }
    }

    func testEveryAPI_fromInsideASavesLoop_neitherCrashesNorHangs() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let reader = try open("reader")
        try await reader.start()
        try await insert(writer, 1...1)
        let finished = Task {
            for await save in reader.saves() {
                _ = save
                _ = reader.cursor
                _ = try await reader.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
                try await reader.write { db in try db.execute(sql: "INSERT OR IGNORE INTO t VALUES (1000)") }
                await reader.flushPublications()
                _ = try reader.prune()
                reader.saves().cancel()
                await reader.close()
            }
            return true
        }
        let ended = try await withDeadline(20, "the saves loop to end after close() from inside it") { try await finished.value }
        XCTAssertTrue(ended, "the saves loop did not end after close() from inside it")
    }

    func testRun_asAService_deliversAndStopsOnGracefulShutdown_keepingTheCursor_andStillTakesWrites() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let reader = try open("reader")
        var received: [Save] = []
        try await testGracefulShutdown { trigger in
            let running = Task { try await reader.run() }
            try await insert(writer, 1...2)
            received = try await first(2, of: reader.saves())
            XCTAssertEqual(keys(received), [1, 2])
            trigger.triggerGracefulShutdown()
            try await running.value
        }
        // Its service stopped: a service shut down after it may still write,
        // and the write is recorded and published as usual.
        let late = try await writeSeq(reader, "INSERT INTO t VALUES (99)")
        let recorded = try await writer.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT max(seq) FROM groupstore_transaction WHERE author = 'reader'")
        }
        XCTAssertEqual(recorded, late)
        await reader.close()
        do {
            try await reader.write { _ in }
            XCTFail("a closed store accepted a write")
        } catch {
            XCTAssertEqual((error as? GroupStoreError)?.code, .closed)
        }
        // The first save was processed; the second was still in hand when the
        // loop stopped, so the cursor kept on disk stops before it.
        let cursor = try String(contentsOfFile: group + "/members/reader/cursor", encoding: .utf8)
        XCTAssertEqual(cursor.split(separator: " ").first.map(String.init), "\(received[0].seq)")
    }

    /// The README's order, the store last: the store's service stops while
    /// the app's loop holds a save; the loop finishes it, asks for the next
    /// one, and the cursor on disk then covers it, with the store still open
    /// (a daemon's top-level store is never released to write it at close).
    func testASaveFinishedAfterTheStoreStopped_isRecordedInTheCursor_beforeTheLoopGoesOn() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let reader = try open("reader")
        try await reader.start()
        try await insert(writer, 1...2)
        // This loop stops with save 2 in hand, and its stream is dropped.
        let seqs = try await first(2, of: reader.saves()).map(\.seq)
        try await testGracefulShutdown { trigger in
            let running = Task { try await reader.run() }
            trigger.triggerGracefulShutdown()
            try await running.value
        }
        // A new loop starts at the save left in hand, and finishes it.
        let cursorFile = group + "/members/reader/cursor"
        let before = try String(contentsOfFile: cursorFile, encoding: .utf8)
        XCTAssertEqual(before.split(separator: " ").first.map(String.init), "\(seqs[0])", "the save in hand is not past the cursor")
        let loop = Task {
            var iterator = reader.saves().makeAsyncIterator()
            let inHand = await iterator.next()
            _ = await iterator.next()  // processes it, then waits: no more saves
            return inHand?.seq
        }
        try await waitForCursorFile(of: "reader", at: seqs[1])
        loop.cancel()
        let handled = await loop.value
        XCTAssertEqual(handled, seqs[1])
    }

    func testAMemberThatOnlyWrites_keepsNoCursor_andHoldsBackNothing() async throws {
        let writer = try open("writer") { $0.writesOnly = true }
        try await makeTable(writer)
        try await insert(writer, 1...3)
        XCTAssertFalse(FileManager.default.fileExists(atPath: group + "/members/writer/cursor"))
        let report = try writer.prune()
        XCTAssertEqual(report.heldBackBy, [])
        XCTAssertEqual(try GroupInspector(directory: group).status().members.first { $0.name == "writer" }?.cursor, nil)
    }

    func testANewConsumer_writesItsStartingPointBeforeItIsLive_evenIfItNeverStarts() throws {
        _ = try open("consumer")
        let cursor = try String(contentsOfFile: group + "/members/consumer/cursor", encoding: .utf8)
        XCTAssertEqual(cursor.split(separator: " ").first, "0")
    }

    func testAMemberHandlingSavesByNotification_movesItsCursorOn_whenNotificationsCountAsProcessed() async throws {
        let writer = try open("writer") { $0.writesOnly = true }
        try await makeTable(writer)
        let observer = try open("observer") {
            $0.notificationsCountAsProcessed = true
            $0.cursorFlushInterval = 0
        }
        let seen = Counter()
        let token = NotificationCenter.default.addObserver(forName: .groupStoreDidSave, object: observer, queue: nil) { _ in seen.add() }
        defer { NotificationCenter.default.removeObserver(token) }
        try await observer.start()
        try await insert(writer, 1...3)
        let head = try await writer.pool.read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM groupstore_transaction") ?? 0 }
        _ = try await withDeadline(20, "3 notifications") {
            while seen.value < 3 { try await Task.sleep(for: .milliseconds(5)) }
            return true
        }
        await observer.close()
        let cursor = try String(contentsOfFile: group + "/members/observer/cursor", encoding: .utf8)
        XCTAssertEqual(cursor.split(separator: " ").first.map(String.init), "\(head)")
    }

    func testAGroupDirectoryReachedThroughASymbolicLink_worksFully() async throws {
        let real = group + "-real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: group, withDestinationPath: real)
        defer { try? FileManager.default.removeItem(atPath: real) }
        let writer = try open("writer")
        try await makeTable(writer)
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        try await insert(writer, 1...1)
        let received = try await first(1, of: saves)
        XCTAssertEqual(keys(received), [1])
        XCTAssertEqual(reader.directoryPath, GroupDirectoryTestSupport.realPath(real))
    }

    func testAFailingMigration_isNamed_andKeepsGRDBsErrorAsTheUnderlyingError() throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("fine") { db in try db.execute(sql: "CREATE TABLE y(id INTEGER PRIMARY KEY)") }
        migrator.registerMigration("broken") { db in
            try db.execute(sql: "CREATE TABLE x(id INTEGER PRIMARY KEY); INSERT INTO nowhere VALUES (1)")
        }
        XCTAssertThrowsError(try open("member") { $0.migrator = migrator }) { error in
            guard let error = error as? GroupStoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .migrationFailed)
            XCTAssertTrue(error.message.contains("'broken'"), error.message)
            XCTAssertEqual(error.localizedDescription, error.message)
            let underlying = error.underlying as? DatabaseError
            XCTAssertEqual(underlying?.resultCode, .SQLITE_ERROR, "\(String(describing: error.underlying))")
            XCTAssertTrue(error.message.contains("nowhere"), error.message)
        }
    }

    func testAMigratorThatErasesOnSchemaChange_isRefused_andTheDatabaseIsKept() async throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("t") { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let first = try open("member") { $0.migrator = migrator }
        try await writeSeq(first, "INSERT INTO t VALUES (1)")
        await first.close()
        migrator.eraseDatabaseOnSchemaChange = true
        XCTAssertThrowsError(try open("member") { $0.migrator = migrator }) { error in
            XCTAssertEqual((error as? GroupStoreError)?.code, .invalidConfiguration)
            XCTAssertTrue("\(error)".contains("eraseDatabaseOnSchemaChange"), "\(error)")
        }
        let rows = try await DatabaseQueue(path: group + "/store.sqlite").read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        XCTAssertEqual(rows, 1)
    }

    func testStart_afterAFailedStart_canBeCalledAgain() async throws {
        let writer = try open("writer")
        try await makeTable(writer)
        let reader = try open("reader")
        let saved = group + "/members-away"
        try FileManager.default.moveItem(atPath: group + "/members", toPath: saved)
        XCTAssertThrowsError(try reader.startBlocking())
        try FileManager.default.moveItem(atPath: saved, toPath: group + "/members")
        try await reader.start()
        let saves = reader.saves()
        try await insert(writer, 1...1)
        let received = try await first(1, of: saves)
        XCTAssertEqual(keys(received), [1])
    }
}

/// A count shared with an observer.
final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

enum GroupDirectoryTestSupport {
    static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
