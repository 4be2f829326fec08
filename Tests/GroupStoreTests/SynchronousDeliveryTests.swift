import Foundation
import GRDB
import Synchronization
import XCTest

@testable import GroupStore

/// `GroupConfiguration.synchronousDelivery`: saves handed over on the merge
/// queue, with no hop, counted as processed once the handler returns; and
/// `postsNotifications` off.
final class SynchronousDeliveryTests: StoreTestCase {
    func testHandler_getsOtherMembersSavesInOrder_onTheMergeQueue_andTheCursorFollowsIt() async throws {
        let got = Mutex<[(seq: Int64, author: String, keys: [KeyValue], onMergeQueue: Bool)]>([])
        let key = DispatchSpecificKey<Int>()
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader") { configuration in
            configuration.cursorFlushInterval = 0.001
            configuration.synchronousDelivery = { save in
                let onMergeQueue = DispatchQueue.getSpecific(key: key) == 1
                got.withLock { $0.append((save.seq, save.author, save.change(of: "t")?.inserted ?? [], onMergeQueue)) }
            }
        }
        reader.delivery.queue.setSpecific(key: key, value: 1)
        try await reader.start()
        var seqs: [Int64?] = []
        for id in 1...3 {
            seqs.append(
                try await writer.writeWithSequence { db in try db.execute(sql: "INSERT INTO t(id) VALUES (?)", arguments: [id]) }.seq)
        }
        try await reader.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (99)") }
        seqs.append(try await writer.writeWithSequence { db in try db.execute(sql: "INSERT INTO t(id) VALUES (4)") }.seq)
        try await waitUntil("4 saves in the handler") { got.withLock { $0.count } >= 4 }
        let saves = got.withLock { $0 }
        // The reader's own save is not handed over, like in a stream.
        XCTAssertEqual(saves.map(\.seq), seqs.compactMap { $0 })
        XCTAssertEqual(saves.map(\.keys), [[.integer(1)], [.integer(2)], [.integer(3)], [.integer(4)]])
        XCTAssertEqual(Set(saves.map(\.author)), ["writer"])
        XCTAssertTrue(saves.allSatisfy(\.onMergeQueue), "the handler ran off the merge queue")

        // No stream: what the handler returned from counts as processed.
        let last = try XCTUnwrap(seqs.last ?? nil)
        let cursor = try await waitForCursorFile(of: "reader", at: last)
        XCTAssertTrue(cursor.hasPrefix("\(last) "), cursor)
    }

    func testHandler_getsAResync_whenTheHistoryWasEmptiedUnderIt() async throws {
        let kinds = Mutex<[Save.Kind]>([])
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader") { configuration in
            configuration.synchronousDelivery = { save in kinds.withLock { $0.append(save.kind) } }
        }
        try await reader.start()
        try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        try await waitUntil("the insert in the handler") { !kinds.withLock { $0.isEmpty } }
        // By hand, as a careless script would: the history is emptied.
        try await writer.pool.write { db in try db.execute(sql: "DELETE FROM groupstore_change") }
        try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        try await waitUntil("a resync in the handler") { kinds.withLock { $0.contains(.resync) } }
        XCTAssertEqual(kinds.withLock { $0.first }, .transaction)
    }

    func testNoNotifications_withNotificationsCountingAsProcessed_stillMovesTheCursor() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader") { configuration in
            configuration.postsNotifications = false
            configuration.notificationsCountAsProcessed = true
            configuration.cursorFlushInterval = 0.001
        }
        try await reader.start()
        let written = try await writer.writeWithSequence { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        let seq = try XCTUnwrap(written.seq)
        try await waitForCursorFile(of: "reader", at: seq)
    }
}
