import Foundation
import XCTest

@testable import GroupStore

/// The feed's buffer: found by binary search, dropped from the front, in
/// sequence order across its bulk compactions.
final class SaveBufferTests: XCTestCase {
    private func saves(_ seqs: some Sequence<Int64>) -> [Save] {
        seqs.map { Save(seq: $0, author: "a", committedAt: Date(timeIntervalSince1970: 0), changes: []) }
    }

    func testFirstAfter_findsTheNextSeq_betweenGapsAndAtBothEnds() {
        var buffer = SaveBuffer()
        XCTAssertNil(buffer.first(after: 0))
        buffer.append(contentsOf: saves([3, 7, 8, 20]))
        XCTAssertEqual(buffer.first(after: 0)?.seq, 3)
        XCTAssertEqual(buffer.first(after: 3)?.seq, 7)
        XCTAssertEqual(buffer.first(after: 5)?.seq, 7)
        XCTAssertEqual(buffer.first(after: 8)?.seq, 20)
        XCTAssertNil(buffer.first(after: 20))
        XCTAssertNil(buffer.first(after: 99))
    }

    func testDropThrough_returnsTheNewestDropped_andKeepsTheRest() {
        var buffer = SaveBuffer()
        buffer.append(contentsOf: saves([3, 7, 8, 20]))
        XCTAssertNil(buffer.drop(through: 2), "nothing at or below 2")
        XCTAssertEqual(buffer.drop(through: 7), 7)
        XCTAssertEqual(buffer.count, 2)
        XCTAssertEqual(buffer.first?.seq, 8)
        XCTAssertEqual(buffer.first(after: 0)?.seq, 8, "dropped saves are not found")
        XCTAssertEqual(buffer.drop(through: 19), 8)
        XCTAssertEqual(buffer.dropOldest(5), 20)
        XCTAssertTrue(buffer.isEmpty)
        XCTAssertNil(buffer.dropOldest(1))
    }

    func testManyDropsAndAppends_keepOrder_acrossCompactions() {
        var buffer = SaveBuffer()
        var next: Int64 = 1
        var expected: [Int64] = []
        for round in 0..<200 {
            let added = Array(next..<(next + 37))
            next += 37 + Int64(round % 3)  // gaps between batches
            buffer.append(contentsOf: saves(added))
            expected += added
            // Drop through a point inside, then the oldest beyond a limit.
            let cut = expected[expected.count / 3]
            XCTAssertEqual(buffer.drop(through: cut), cut)
            expected.removeAll { $0 <= cut }
            if expected.count > 50 {
                let excess = expected.count - 50
                XCTAssertEqual(buffer.dropOldest(excess), expected[excess - 1])
                expected.removeFirst(excess)
            }
            XCTAssertEqual(buffer.count, expected.count)
            XCTAssertEqual(buffer.first?.seq, expected.first)
            for seq in expected.prefix(3) { XCTAssertEqual(buffer.first(after: seq - 1)?.seq, seq) }
        }
    }

    func testReplace_keepsOnlyTheNewSaves() {
        var buffer = SaveBuffer()
        buffer.append(contentsOf: saves(1...100))
        _ = buffer.drop(through: 80)
        buffer.replace(with: saves([5]))
        XCTAssertEqual(buffer.count, 1)
        XCTAssertEqual(buffer.first(after: 0)?.seq, 5)
    }

    /// A notification posted before a resync, marked processed after it (a
    /// member whose notifications count as processing), no longer counts:
    /// the resync stays unprocessed and the cursor does not pass it.
    func testFeed_ignoresWorkFromBeforeAResync() {
        let feed = SaveFeed(cursor: 0, readHistory: { _, _ in nil })
        let before = feed.generation
        feed.append(saves([5, 9]), merged: 9)
        // The history went back: a resync at 3.
        feed.resync(Save(kind: .resync, seq: 3, author: "", committedAt: Date(timeIntervalSince1970: 0), changes: []))
        feed.markProcessed(9, generation: before)
        XCTAssertEqual(feed.safeCursor(), 2, "a notification from before the resync moved the cursor past it")
        feed.markProcessed(3, generation: feed.generation)
        XCTAssertEqual(feed.safeCursor(), 3)
    }
}
