import Foundation
import GRDB
import Synchronization
import XCTest

@testable import GroupStore

/// The cursor a member keeps on disk: never behind what it wrote already,
/// not replaced before a resync is processed, and not holding back pruning
/// once it is behind what was pruned.
final class KeptCursorTests: CaptureTestCase {
    private func cursorFile(_ member: String) throws -> (seq: Int64, text: String) {
        let text = try String(contentsOfFile: group + "/members/\(member)/cursor", encoding: .utf8)
        return (try XCTUnwrap(Int64(text.split(separator: " ")[0]), text), text)
    }

    func testASubscriberLeftBehindTheBuffer_doesNotMoveTheKeptCursorBack() async throws {
        let writer = try open("writer") { $0.writesOnly = true }
        try await writeSeq(writer, "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let reader = try open("reader") { $0.cursorFlushInterval = 0.001 }
        let saves = reader.saves()  // subscribed, and never asks for a save
        try await reader.start()
        // The reader's own writes hold nothing back: its cursor is written
        // past them.
        var own: Int64 = 0
        for id in 1...3 { own = try await writeSeq(reader, "INSERT INTO t VALUES (\(id))") }
        _ = try await waitForCursorFile(of: "reader", at: own)
        // More saves than the buffer keeps, while the subscriber takes none:
        // its position falls behind the buffer's floor.
        var newest: Int64 = 0
        for id in 100..<(100 + SaveFeed.bufferLimit + 50) { newest = try await writeSeq(writer, "INSERT INTO t VALUES (\(id))") }
        let last = newest
        try await waitUntil("the reader to merge every transaction") { reader.delivery.publicCursor.withLock { $0 } >= last }
        reader.delivery.flushCursor()
        XCTAssertGreaterThanOrEqual(try cursorFile("reader").seq, own, "the kept cursor went back behind what was written")
        withExtendedLifetime(saves) {}
    }

    func testAResyncNotProcessedBeforeTheStoreCloses_isDeliveredAgainAfterReopening() async throws {
        let writer = try open("writer")
        try await writeSeq(writer, "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let reader = try open("reader") { $0.cursorFlushInterval = 0.001 }
        var iterator = reader.saves().makeAsyncIterator()
        try await reader.start()
        let one = try await writeSeq(writer, "INSERT INTO t VALUES (1)")
        try await writeSeq(writer, "INSERT INTO t VALUES (2)")
        let firstSave = await iterator.next()
        XCTAssertEqual(firstSave?.seq, one)
        _ = await iterator.next()  // processes the first, holds the second
        _ = try await waitForCursorFile(of: "reader", at: one)
        // By hand, as a careless script would: the history is emptied and a
        // transaction recorded, numbered again below the reader's cursor.
        try await writer.pool.write { db in
            try db.execute(
                sql: """
                    DELETE FROM groupstore_change; INSERT INTO t VALUES (3);
                    INSERT INTO groupstore_change(entity, op, key, rid) VALUES (0, 6, NULL, 0)
                    """)
        }
        let resync = await iterator.next()
        XCTAssertEqual(resync?.kind, .resync)
        XCTAssertGreaterThan(resync?.seq ?? 0, 0, "the resync names the new history's head")
        // The process stops with the resync in hand, not processed.
        await reader.close()

        let again = try open("reader")
        let saves = again.saves()
        try await again.start()
        let next = try await first(1, of: saves)[0]
        XCTAssertEqual(next.kind, .resync, "the resync was lost: got \(next)")
    }

    func testAMemberBehindWhatWasPruned_holdsNothingBack() async throws {
        let writer = try open("writer") { $0.writesOnly = true }
        try await writeSeq(writer, "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let (old, _) = try reader("old")
        await old.close()
        for id in 1...3 { try await writeSeq(writer, "INSERT INTO t VALUES (\(id))") }
        let janitor = try open("janitor") { $0.writesOnly = true }
        // Past the retention everything goes, the dead member's cursor too.
        let expired = try janitor.prune(now: Date().addingTimeInterval(30 * 86_400))
        XCTAssertGreaterThan(expired.prunedThrough, try cursorFile("old").seq)

        let live = try open("live") { configuration in
            configuration.synchronousDelivery = { _ in }
            configuration.cursorFlushInterval = 0.001
        }
        try await live.start()
        var last: Int64 = 0
        for id in 4...5 { last = try await writeSeq(writer, "INSERT INTO t VALUES (\(id))") }
        _ = try await waitForCursorFile(of: "live", at: last)
        // Within the retention: the dead member, behind what was pruned,
        // resyncs when it comes back whatever is pruned now.
        let report = try janitor.prune()
        XCTAssertEqual(report.prunedThrough, last)
        XCTAssertEqual(report.heldBackBy.map(\.member), [])
    }
}
