import Dispatch
import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import Metrics
import MetricsTestKit
import Synchronization
import XCTest

/// A running bridge syncs by itself; sync is observable through events,
/// notifications and metrics.
final class EventsTests: CloudTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)"

    /// The metrics factory of this test process, bootstrapped once.
    static let metrics: TestMetrics = {
        // One factory per process: every test target runs in the same
        // process, and another one may have bootstrapped it already.
        if let existing = MetricsSystem.factory as? TestMetrics { return existing }
        let metrics = TestMetrics()
        MetricsSystem.bootstrap(metrics)
        return metrics
    }()

    func testRunningBridges_carryAWriteToTheOtherGroup_andTriggerSyncRunsACompleteSync() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        let bSaves = b.saves()
        try await b.start()
        let syncA = CloudSync(try configuration("a", tables: ["note"]))
        let syncB = CloudSync(try configuration("b", tables: ["note"]))
        let eventsA = syncA.events()
        let runA = Task { try await syncA.run() }
        let runB = Task { try await syncB.run() }
        defer {
            runA.cancel()
            runB.cancel()
        }
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'live')") }
        let save = try await deadline(30, "the save of `cloud` in group B") {
            for await save in bSaves where save.author == "cloud" && save.change(of: "note")?.inserted == ["n1"] { return save }
            return nil
        }
        XCTAssertEqual(save.author, "cloud")
        XCTAssertEqual(try dump(b, "note"), ["t:n1|t:live"])

        syncA.triggerSync(complete: true)
        let complete = try await deadline(30, "a complete sync of A") {
            var sawStart = false
            for await event in eventsA {
                if case .started(true) = event { sawStart = true }
                if case .finished(let summary) = event, sawStart { return summary }
            }
            return nil
        }
        XCTAssertNil(complete.error)
        XCTAssertEqual(complete.pending, 0)
        runA.cancel()
        runB.cancel()
        _ = await runA.result
        _ = await runB.result
        let status = try CloudSyncStatus.read(group: group("a"))
        XCTAssertFalse(status.live, "the bridge left the group when cancelled")
        XCTAssertNotNil(status.lastSync)
    }

    func testAColumnAddedWhileTheBridgesRun_isSyncedWithoutARestart() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'first')") }
        let bSaves = b.saves()
        try await b.start()
        let syncA = CloudSync(try configuration("a", tables: ["note"]))
        let syncB = CloudSync(try configuration("b", tables: ["note"]))
        let runA = Task { try await syncA.run() }
        let runB = Task { try await syncB.run() }
        defer {
            runA.cancel()
            runB.cancel()
        }
        _ = try await deadline(30, "n1 in group B") {
            for await save in bSaves where save.author == "cloud" && save.change(of: "note")?.inserted == ["n1"] { return save }
            return nil
        }
        try await b.write { db in try db.execute(sql: "ALTER TABLE note ADD COLUMN extra TEXT") }
        try await a.write { db in
            try db.execute(sql: "ALTER TABLE note ADD COLUMN extra TEXT")
            try db.execute(sql: "UPDATE note SET extra = 'E1'")
        }
        _ = try await deadline(30, "the new column's value in group B") {
            for await save in bSaves where save.author == "cloud" && save.change(of: "note")?.updated == ["n1"] { return save }
            return nil
        }
        XCTAssertEqual(try dump(b, "note"), ["t:n1|t:first|t:E1"])
    }

    func testNotifications_didStartAndDidFinish_carryTheSummaryAndTheError() async throws {
        _ = try open("a", schema: Self.schema)
        let faults = RemoteFaults()
        faults.failNext(1000)
        let remote = remote(faults: faults)
        let sync = CloudSync(try configuration("a", tables: ["note"], remote: remote))
        let posted = Mutex<[String]>([])
        let failure = Mutex<CloudSyncError?>(nil)
        let center = NotificationCenter.default
        let start = center.addObserver(forName: .cloudSyncDidStart, object: sync, queue: nil) { _ in
            posted.withLock { $0.append("start") }
        }
        let finished = expectation(description: "did-finish posted")
        let finish = center.addObserver(forName: .cloudSyncDidFinish, object: sync, queue: nil) { notification in
            posted.withLock { $0.append("finish") }
            finished.fulfill()
            failure.withLock { $0 = notification.userInfo?["error"] as? CloudSyncError }
            XCTAssertNotNil(notification.userInfo?["summary"] as? CloudSyncSummary)
        }
        defer {
            center.removeObserver(start)
            center.removeObserver(finish)
        }
        let summary = try await sync.syncOnce()
        XCTAssertEqual(summary.errorCode, "transient")
        // Posted from the events' own queue, in order, after the sync returned or before.
        await fulfillment(of: [finished], timeout: 10)
        XCTAssertEqual(posted.withLock { $0 }, ["start", "finish"])
        XCTAssertEqual(failure.withLock { $0?.code }, .transient)
        XCTAssertTrue(failure.withLock { $0?.message.contains(remote.displayName) ?? false })
    }

    /// Notifications are posted from a queue of their own: an observer of
    /// `.cloudSyncDidFinish` that does not return holds the notifications
    /// after it, never the engine. Here it is held until a second sync has
    /// finished; posted on the engine's queue, the first sync would never
    /// have returned.
    func testASlowDidFinishObserver_doesNotDelayTheNextSync() async throws {
        let a = try open("a", schema: Self.schema)
        let sync = CloudSync(try configuration("a", tables: ["note"]))
        let release = DispatchSemaphore(value: 0)
        let held = Mutex(0)
        let observer = NotificationCenter.default.addObserver(forName: .cloudSyncDidFinish, object: sync, queue: nil) { _ in
            held.withLock { $0 += 1 }
            release.wait()
        }
        defer {
            for _ in 0..<4 { release.signal() }
            NotificationCenter.default.removeObserver(observer)
        }
        let first = try await deadline(20, "the first sync, its did-finish observer held") { try await sync.syncOnce() }
        XCTAssertNil(first.error)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'while the observer is held')") }
        let second = try await deadline(20, "a second sync while the first one's did-finish observer is still held") {
            try await sync.syncOnce()
        }
        XCTAssertNil(second.error)
        XCTAssertEqual(second.uploaded, 1)
        XCTAssertEqual(held.withLock { $0 }, 1, "the second did-finish waits behind the held observer, in order")
    }

    func testMetrics_pendingUploads_lastSuccess_andConflicts() async throws {
        let metrics = Self.metrics
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 't0')") }
        try await sync("a", tables: ["note"])
        try await sync("b", tables: ["note"])
        try await a.write { db in try db.execute(sql: "UPDATE note SET title = 'A'") }
        try await b.write { db in try db.execute(sql: "UPDATE note SET title = 'B'") }
        try await sync("a", tables: ["note"])
        let before = Date().timeIntervalSince1970
        try await sync("b", tables: ["note"])
        let dimensions = [("bridge", group("b"))]
        XCTAssertEqual(try metrics.expectCounter("groupstore_cloud_conflicts_total", dimensions).totalValue, 1)
        XCTAssertEqual(try metrics.expectGauge("groupstore_cloud_pending_uploads", dimensions).lastValue, 0)
        let lastSuccess = try metrics.expectGauge("groupstore_cloud_last_success_seconds", dimensions).lastValue ?? 0
        XCTAssertGreaterThanOrEqual(lastSuccess, before - 1)
    }
}
