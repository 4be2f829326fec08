import Foundation
import GRDB
import Metrics
import MetricsTestKit
import Synchronization
import XCTest

@testable import GroupStore

/// The store's swift-metrics instruments (see `GroupMetrics`), read back
/// through the test backend.
final class MetricsTests: StoreTestCase {
    /// The metrics factory of this test process, bootstrapped once.
    static let metrics: TestMetrics = {
        // One factory per process: every test target runs in the same
        // process, and another one may have bootstrapped it already.
        if let existing = MetricsSystem.factory as? TestMetrics { return existing }
        let metrics = TestMetrics()
        MetricsSystem.bootstrap(metrics)
        return metrics
    }()

    private func dimensions(_ member: String) -> [(String, String)] {
        [("group", group), ("member", member)]
    }

    /// A started reader with a stream, and a writer that created table `t`
    /// and inserted `count` rows into it, one transaction each.
    /// A writer's table, then `count` inserts, followed by a reader; also
    /// the sequence numbers of the writer's transactions.
    private func readerFollowingInserts(_ count: Int) async throws -> (GroupStore, GroupStore, SaveStream, [Int64]) {
        let writer = try open("writer")
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        var seqs = [try await writeSeq(writer, "CREATE TABLE t(id INTEGER PRIMARY KEY)")]
        for id in 1...count {
            seqs.append(
                try await writeSeq(writer, "INSERT INTO t(id) VALUES (?)", arguments: [id]))
        }
        return (writer, reader, saves, seqs)
    }

    func testPublishedMergedDeliveredAndLag_countWhatHappened() async throws {
        let metrics = Self.metrics
        let (writer, _, saves, _) = try await readerFollowingInserts(3)
        await writer.flushPublications()
        _ = try await first(4, of: saves)

        // A payload still waiting when a newer commit comes is skipped (peers
        // read the history), so the two add up to the commits.
        let published = try metrics.expectCounter("groupstore_saves_published_total", dimensions("writer")).totalValue
        let skipped = (try? metrics.expectCounter("groupstore_payloads_skipped_total", dimensions("writer")).totalValue) ?? 0
        XCTAssertEqual(published + skipped, 4)
        XCTAssertGreaterThanOrEqual(published, 1)
        XCTAssertEqual(try metrics.expectCounter("groupstore_saves_delivered_total", dimensions("reader")).totalValue, 4)
        XCTAssertGreaterThanOrEqual(try metrics.expectCounter("groupstore_saves_merged_total", dimensions("reader")).totalValue, 4)
        XCTAssertEqual(try metrics.expectGauge("groupstore_member_lag", dimensions("reader")).lastValue, 0)
        let fruitful = try metrics.expectCounter("groupstore_wakeups_total", dimensions("reader") + [("found", "true")])
        XCTAssertGreaterThanOrEqual(fruitful.totalValue, 1)
        XCTAssertFalse(try metrics.expectTimer("groupstore_merge_seconds", dimensions("reader")).values.isEmpty)
        XCTAssertEqual(try metrics.expectCounter("groupstore_history_fallbacks_total", dimensions("reader")).totalValue, 0)
    }

    func testASubscriberBehindTheBuffer_countsAFallbackToTheHistory() async throws {
        let metrics = Self.metrics
        let count = SaveFeed.bufferLimit + 100
        let (_, reader, saves, seqs) = try await readerFollowingInserts(count)
        // Nobody consumed while the merger read them all: the oldest left the buffer.
        try await waitUntil("the reader to merge every transaction") { reader.delivery.publicCursor.withLock { $0 } >= seqs.last! }
        let received = try await first(count + 1, of: saves)
        XCTAssertEqual(received.map(\.seq), seqs)
        XCTAssertGreaterThanOrEqual(
            try metrics.expectCounter("groupstore_history_fallbacks_total", dimensions("reader")).totalValue, 1)
    }

    func testUnderLoad_aReaderCoalesces_andTheWALWatchItTookOffWakesItForTheNextOutsideCommit() async throws {
        let metrics = Self.metrics
        let writer = try open("writer") { $0.writesOnly = true }
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader")
        let traces = Mutex<[Int64: DeliveryTrace]>([:])
        reader.traceDeliveries { trace in traces.withLock { $0[trace.seq] = trace } }
        let saves = reader.saves()
        try await reader.start()  // joins at seq 1, the table's
        // Ten commits while the reader's queue is held: its next merge finds
        // them all, so it coalesces (the -wal file unwatched for a moment).
        // Unless the safety tick's merge, queued meanwhile, took them first:
        // then again (a tick comes once a second).
        let coalescings = try metrics.expectCounter("groupstore_coalescing_intervals_total", dimensions("reader"))
        var next = 1
        for _ in 1...3 {
            let ids = next..<(next + 10)
            next += 10
            // (From a thread of its own: holding the queue blocks.)
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                Thread.detachNewThread {
                    done.resume(
                        with: Result {
                            try reader.delivery.queue.sync {
                                for id in ids {
                                    try writer.writeBlocking { db in try db.execute(sql: "INSERT INTO t(id) VALUES (?)", arguments: [id]) }
                                }
                            }
                        })
                }
            }
            let burst = try await first(10, of: saves)
            XCTAssertEqual(burst.map { $0.changes.first?.inserted }, ids.map { [KeyValue.integer(Int64($0))] })
            // The merge that delivered them has returned (and counted).
            try await waitUntil("the reader's queue") { reader.delivery.queue.sync { true } }
            if coalescings.totalValue >= 1 { break }
        }
        XCTAssertGreaterThanOrEqual(coalescings.totalValue, 1, "no coalescing in three bursts")
        let outsideID = next

        // The interval over, its -wal wake-up and rechecks done (they found
        // nothing, so the trace forgot them).
        try await waitUntil("the reader to settle") {
            reader.delivery.queue.sync { reader.delivery.isIdle }
        }
        // A writer outside the library publishes no payload: only the -wal
        // watch, put back after the interval, wakes the reader at once (else
        // the safety tick would, up to a second later).
        let committing = DeliveryTrace.now()
        // Without an fsync per commit (a busy disk would delay its
        // visibility past the rechecks: that is not what this test is about).
        var outsideConfiguration = Configuration()
        outsideConfiguration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let outside = try DatabaseQueue(path: group + "/store.sqlite", configuration: outsideConfiguration)
        try await outside.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (?)", arguments: [outsideID]) }
        let last = try await first(1, of: saves)
        XCTAssertEqual(last.map { $0.change(of: "t")?.inserted }, [[KeyValue.integer(Int64(outsideID))]])
        let lastSeq = last[0].seq
        // Traced once the merge that delivered it returned.
        try await waitUntil("the trace of the outside commit") { traces.withLock { $0[lastSeq] != nil } }
        let trace = try XCTUnwrap(traces.withLock { $0[lastSeq] })
        XCTAssertEqual(trace.wake, .wal, "what woke the reader for the outside commit")
        XCTAssertGreaterThanOrEqual(trace.wokeAt, committing, "the reader was woken before the commit")
    }
}
