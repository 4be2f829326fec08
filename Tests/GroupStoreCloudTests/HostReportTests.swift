import Foundation
import GRDB
import GroupStore
import XCTest

@testable import GroupStoreCloud

/// What a bridge reports of itself to the fleet view, and when
/// (``SyncEngine/reportHost(_:)``): a sync whose only news is how far the
/// host has read reports it at most every
/// ``CloudSyncConfiguration/progressInterval``, so a fleet's server does
/// not write a report for every device on every change.
final class HostReportTests: CloudTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"

    /// Group b writes a note and uploads it, so that group a's next fetch moves its token.
    private func writeFromB(_ key: String, _ writer: SyncEngine, _ app: GroupStore) async throws {
        try await app.write { db in try db.execute(sql: "INSERT INTO note VALUES (?, 'from b')", arguments: [key]) }
        let synced = await writer.sync(complete: true)
        XCTAssertNil(synced.summary.error)
    }

    private func engine(_ name: String, member: String = "cloud", remote: any CloudDatabase, progressInterval: TimeInterval)
        async throws -> SyncEngine
    {
        let bridge = try open(name, member: member, schema: Self.schema)
        var configuration = try configuration(name, tables: ["note"], remote: remote)
        configuration.progressInterval = progressInterval
        return try await SyncEngine.make(
            store: bridge, configuration: configuration, events: EventHub(label: "test", object: { nil }), tracer: SyncTracer(),
            oneShot: false)
    }

    func testASyncThatOnlyReadFurther_reportsAtMostEveryProgressInterval() async throws {
        let appB = try open("b", schema: Self.schema)
        let writer = try await engine("b", remote: remote(), progressInterval: 5)
        _ = try open("a", schema: Self.schema)

        let spaced = RecordingRemote(remote())
        let a = try await engine("a", remote: spaced, progressInterval: 3600)
        let first = await a.sync(complete: true)
        XCTAssertNil(first.summary.error)
        XCTAssertEqual(spaced.reports.count, 1, "the first sync reports the host")
        try await writeFromB("n1", writer, appB)
        let fetched = await a.sync(complete: true)
        XCTAssertEqual(fetched.summary.fetched, 1)
        XCTAssertEqual(spaced.reports.count, 1, "a sync that only read further reported within the progress interval")

        // The same host with no spacing: each sync that read further reports where it now is.
        let every = RecordingRemote(remote())
        let again = try await engine("a", member: "cloud2", remote: every, progressInterval: 0)
        let started = await again.sync(complete: true)
        XCTAssertNil(started.summary.error)
        XCTAssertEqual(every.reports.count, 1)
        try await writeFromB("n2", writer, appB)
        let fetchedAgain = await again.sync(complete: true)
        XCTAssertEqual(fetchedAgain.summary.fetched, 1)
        XCTAssertEqual(every.reports.count, 2, "a sync that read further reports once the progress interval has passed")
        XCTAssertNotEqual(every.reports[0].tokens, every.reports[1].tokens, "the second report says how far the host has read now")
        XCTAssertEqual(every.reports[1].pending, 0)
    }
}
