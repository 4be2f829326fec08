import Dispatch
import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import XCTest

/// The bridge's member keeps its cursor durable like any member, and the
/// bridge asks for the next save only once a save's keys are durably
/// pending: the kept cursor never passes a save not taken in. Here the
/// intake cannot commit (another connection holds the write lock) while
/// the save is delivered: the kept cursor must stay behind it until then.
final class BridgeCursorTests: CloudTestCase {
    func testTheBridgesKeptCursor_neverPassesASaveWhoseKeysAreNotPendingYet() async throws {
        let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"
        let app = try open("a", schema: schema)
        let sync = CloudSync(try configuration("a", tables: ["note"]))
        let events = sync.events()
        let run = Task { try await sync.run() }
        defer { run.cancel() }
        _ = try await deadline(30, "the bridge's first sync") {
            for await event in events { if case .finished = event { return true } }
            return nil
        }
        let cursorFile = group("a") + "/members/cloud/cursor"
        @Sendable func keptCursor() -> Int64? {
            guard let text = try? String(contentsOfFile: cursorFile, encoding: .utf8) else { return nil }
            return text.split(whereSeparator: { !$0.isNumber }).first.flatMap { Int64($0) }
        }
        guard let seq = try await app.writeWithSequence({ db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'x')") }).seq else {
            return XCTFail("the write recorded no transaction")
        }
        // Hold SQLite's write lock from another connection: the bridge's member reads the
        // save (reads take no write lock) but its intake cannot commit.
        let holder = try DatabaseQueue(path: group("a") + "/store.sqlite")
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? holder.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                locked.signal()
                release.wait()
                try db.execute(sql: "COMMIT")
            }
        }
        locked.wait()
        // Longer than the member's cursor flush interval (50 ms) many times over.
        try await Task.sleep(for: .milliseconds(600))
        let whileLocked = keptCursor() ?? 0
        release.signal()
        XCTAssertLessThan(whileLocked, seq, "the bridge's kept cursor passed save \(seq) before its keys were pending")
        _ = try await deadline(30, "the bridge's kept cursor to reach \(seq) once the intake commits") {
            while (keptCursor() ?? 0) < seq { try await Task.sleep(for: .milliseconds(10)) }
            return true
        }
        let status = try CloudSyncStatus.read(group: group("a"))
        XCTAssertEqual(status.transactionsNotTakenIn, 0)
    }
}
