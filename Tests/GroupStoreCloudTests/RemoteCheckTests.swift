import Foundation
import GRDB
import GroupStore
import Synchronization
import XCTest

@testable import GroupStoreCloud

/// When a running bridge asks the remote's history: before every sync,
/// after a sync that uploaded, and at once when the remote answers as a
/// remote replaced or restored would. A remote replaced between a sync's
/// check and its upload is found by the refusal of the upload (its type not
/// prepared there), before anything is parked.
final class RemoteCheckTests: CloudTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"

    func testEverySyncAsksFirst_byDefault() async throws {
        _ = try await twoSyncs(through: HistoryCountingRemote(base: remote()))
    }

    func testARemoteReplacedBetweenASyncsCheckAndItsUpload_isFoundByTheRefusal() async throws {
        let server = memoryServer
        // The fourth check is the third sync's, before its upload: the remote is replaced right after it.
        let counting = HistoryCountingRemote(base: remote()) { asked in if asked == 4 { server.replace() } }
        let (app, bridge, engine) = try await twoSyncs(through: counting)
        try await write(app, engine, "n2")
        let third = await engine.sync(complete: false, fetch: false)
        XCTAssertNil(third.summary.error, third.summary.error ?? "")
        XCTAssertEqual(third.summary.parked, 0, "nothing is parked because the remote was new")
        XCTAssertGreaterThan(counting.asked, 4, "the refusal of n2 (its type not prepared there) had the history asked")
        let reset = try await bridge.pool.read { db in try SyncState.remoteReset(db) }
        XCTAssertEqual(reset?.kind, .replaced)
        let names = try await remote().fetchChanges(in: .private("alice"), since: nil, limit: 100).changed.map(\.id.name).sorted()
        XCTAssertEqual(names, ["n1", "n2"], "both rows are on the new remote")
    }

    /// A running bridge's engine for group a through `counting`, after its
    /// first sync and a second that uploads row n1: each asked first, and
    /// the second after its upload too.
    private func twoSyncs(through counting: HistoryCountingRemote) async throws -> (app: GroupStore, bridge: GroupStore, engine: SyncEngine) {
        let app = try open("a", schema: Self.schema)
        let bridge = try open("a", member: "cloud", schema: Self.schema)
        let engine = try await SyncEngine.make(
            store: bridge, configuration: try configuration("a", tables: ["note"], remote: counting),
            events: EventHub(label: "test", object: { nil }), tracer: SyncTracer(), oneShot: false)
        _ = await engine.sync(complete: false)
        try await write(app, engine, "n1")
        let second = await engine.sync(complete: false, fetch: false)
        XCTAssertEqual(second.summary.uploaded, 1)
        XCTAssertEqual(counting.asked, 3, "the first sync asks; the second asks before and after its upload")
        return (app, bridge, engine)
    }

    /// Writes row `name` as the app and hands its save to the engine, as the bridge's member is delivered it.
    private func write(_ app: GroupStore, _ engine: SyncEngine, _ name: String) async throws {
        let written = try await app.writeWithSequence { db in
            try db.execute(sql: "INSERT INTO note VALUES (?, 'x')", arguments: [name])
        }
        let save = Save(
            seq: try XCTUnwrap(written.seq), author: "app", committedAt: Date(),
            changes: [EntityChange(entity: "note", inserted: [.text(name)])])
        let taken = await engine.takeIn(delivered: [save])
        XCTAssertTrue(taken)
    }
}

/// Counts the calls of ``CloudDatabase/history(keeping:)``, and runs
/// `afterHistory` with the count after answering each.
private final class HistoryCountingRemote: ForwardingRemote {
    let base: any CloudDatabase
    private let count = Mutex(0)
    private let afterHistory: @Sendable (Int) -> Void
    init(base: any CloudDatabase, afterHistory: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.base = base
        self.afterHistory = afterHistory
    }
    var asked: Int { count.withLock { $0 } }
    func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory {
        let history = try await base.history(keeping: mark)
        afterHistory(count.withLock { $0 += 1; return $0 })
        return history
    }
}
