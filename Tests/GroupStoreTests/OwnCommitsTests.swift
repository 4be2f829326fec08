import Foundation
import GRDB
import XCTest

@testable import GroupStore

/// The own-commit rule (``OwnCommits``): a member is never delivered its own
/// saves, and its own commits never make it skip a peer's.
final class OwnCommitsTests: StoreTestCase {
    private func payload(_ seq: Int64, after previous: Int64) -> Payload {
        Payload(save: Save(seq: seq, author: "me", committedAt: Date(), changes: []), truncated: false, previous: previous)
    }

    func testOnlyCommitsThatFollowTheCursorDirectly_passIt_inSequenceOrder() {
        let own = OwnCommits()
        // Noted out of order: 6 (after 5), 8 (after 6), then 11 (after 9: a peer's 9 lies between).
        own.note(payload(8, after: 6))
        own.note(payload(6, after: 5))
        own.note(payload(11, after: 9))
        XCTAssertEqual(own.pass(from: 5).map(\.seq), [6, 8])
        XCTAssertEqual(own.newest, 11)
        // The rest was taken: read with the history, not passed later.
        XCTAssertEqual(own.pass(from: 9).map(\.seq), [])
        // Behind a peer's commit, nothing passes.
        own.note(payload(13, after: 12))
        XCTAssertEqual(own.pass(from: 11).map(\.seq), [])
        own.forget()
        XCTAssertEqual(own.newest, 0)
    }

    /// Two members of one group write at once, from two threads, as fast as
    /// they can, while each follows the group: each is delivered every one of
    /// the other's transactions, in order, and none of its own.
    func testTwoMembersWritingAtOnce_eachGetsEveryOneOfTheOthersSaves_andNoneOfItsOwn() async throws {
        let a = try open("a")
        try await writeSeq(a, "CREATE TABLE t(id INTEGER PRIMARY KEY, author TEXT)")
        let b = try open("b")
        let streams = (a.saves(), b.saves())
        try await a.start()
        try await b.start()
        let count = 400
        let done = DispatchGroup()
        for store in [a, b] {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                for _ in 0..<count {
                    let seq = try? store.writeBlocking { db -> Int64 in
                        try db.execute(sql: "INSERT INTO t(author) VALUES (?)", arguments: [store.member.rawValue])
                        return db.lastInsertedRowID
                    }
                    XCTAssertNotNil(seq)
                }
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                done.wait(); continuation.resume()
            }
        }
        let rows = try await a.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, author FROM t ORDER BY id").map {
                (id: $0["id"] as Int64, author: $0["author"] as String)
            }
        }
        XCTAssertEqual(rows.count, 2 * count)
        for (store, stream, other) in [(a, streams.0, "b"), (b, streams.1, "a")] {
            let expected = rows.filter { $0.author == other }.map { KeyValue.integer($0.id) }
            let saves = try await first(count, of: stream, timeout: 60)
            XCTAssertTrue(saves.allSatisfy { $0.author == other }, "\(store.member) was delivered its own save")
            XCTAssertEqual(
                saves.flatMap { $0.change(of: "t")?.inserted ?? [] }, expected, "\(store.member) missed or reordered a peer's save")
        }
    }
}
