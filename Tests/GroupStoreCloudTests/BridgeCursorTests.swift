import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import Synchronization
import XCTest

/// The bridge's member keeps its cursor durable like any member, and the
/// bridge asks for the next save only once a save's keys are durably
/// pending: the kept cursor never passes a save not taken in. Sampled
/// during a burst of writes (the cursor file first, then the durable intake
/// position), the kept cursor is never past the intake.
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
        _ = try await deadline(30, "the bridge's kept cursor to reach \(seq)") {
            while (keptCursor() ?? 0) < seq { try await Task.sleep(for: .milliseconds(10)) }
            return true
        }
        // A burst of writes while the kept cursor and the durable intake position are
        // sampled, the cursor first: the cursor can only lag what is durably pending.
        let done = Mutex(false)
        let writer = Task {
            for n in 2...200 {
                try await app.write { db in try db.execute(sql: "INSERT INTO note VALUES (?, 'x')", arguments: ["n\(n)"]) }
            }
            done.withLock { $0 = true }
        }
        let reader = try DatabaseQueue(path: group("a") + "/store.sqlite")
        var samples = 0
        while !done.withLock({ $0 }) || samples < 20 {
            let cursor = keptCursor() ?? 0
            let intake = try await reader.read { db in
                try Int64.fetchOne(db, sql: "SELECT value FROM groupstore_cloud_meta WHERE key = 'intake_seq'") ?? 0
            }
            XCTAssertLessThanOrEqual(cursor, intake, "the bridge's kept cursor \(cursor) passed the saves taken in (through \(intake))")
            samples += 1
            try await Task.sleep(for: .milliseconds(2))
        }
        try await writer.value
        XCTAssertGreaterThan(samples, 10)
        // The last saves of the burst are taken in shortly after it.
        let groupA = group("a")
        _ = try await deadline(30, "every transaction of the burst taken in") {
            while try CloudSyncStatus.read(group: groupA).transactionsNotTakenIn > 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
            return true
        }
    }
}
