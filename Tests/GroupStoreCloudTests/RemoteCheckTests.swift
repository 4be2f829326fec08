import Foundation
import GRDB
import GroupStore
import Synchronization
import XCTest

@testable import GroupStoreCloud

/// When a running bridge asks the remote's history on its own: before its
/// first sync, and after it found the remote reset. Every other sync has the
/// history checked by its fetches and uploads themselves, in the remote's
/// transaction, so a remote replaced or restored just before a sync's upload
/// or fetch is found by that call, before anything of it is applied.
final class RemoteCheckTests: CloudTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)"

    func testOnlyTheFirstSyncAsksOnItsOwn_everyCallAfterCarriesTheMark() async throws {
        let counting = HistoryCountingRemote(base: remote())
        let (app, _, engine) = try await twoSyncs(through: counting)
        try await write(app, engine, "n2")
        let third = await engine.sync(complete: false, fetch: true)
        XCTAssertNil(third.summary.error, third.summary.error ?? "")
        XCTAssertEqual(counting.asked, 1, "only the first sync asked the history on its own")
        XCTAssertGreaterThan(counting.carried, 2, "the uploads and the fetch carried the mark")
        XCTAssertEqual(counting.withoutMark, 0, "no fetch or upload went without the mark")
    }

    func testARemoteReplacedBeforeAnUpload_isFoundByTheUpload_beforeAnythingIsApplied() async throws {
        let counting = HistoryCountingRemote(base: remote())
        let (app, bridge, engine) = try await twoSyncs(through: counting)
        memoryServer.replace()
        try await write(app, engine, "n2")
        let third = await engine.sync(complete: false, fetch: false)
        XCTAssertNil(third.summary.error, third.summary.error ?? "")
        XCTAssertEqual(third.summary.parked, 0, "nothing is parked because the remote was new")
        XCTAssertEqual(counting.refused, 1, "the upload of n2 was refused by the check, not applied")
        let reset = try await bridge.pool.read { db in try SyncState.remoteReset(db) }
        XCTAssertEqual(reset?.kind, .replaced)
        let names = try await remote().fetchChanges(in: .private("alice"), since: nil, limit: 100).changed.map(\.id.name).sorted()
        XCTAssertEqual(names, ["n1", "n2"], "both rows are on the new remote")
    }

    /// The review's F1: a sync that only fetches, right after the remote was
    /// restored from a copy that lacks n1, finds it by its fetch and brings
    /// n1 back instead of taking the older state.
    func testARemoteRestoredBeforeAFetchOnlySync_isFoundByTheFetch() async throws {
        let counting = HistoryCountingRemote(base: remote())
        let copy = memoryServer.snapshot()
        let (_, bridge, engine) = try await twoSyncs(through: counting)
        memoryServer.restore(copy)
        let third = await engine.sync(complete: false, fetch: true)
        XCTAssertNil(third.summary.error, third.summary.error ?? "")
        XCTAssertEqual(counting.refused, 1, "the fetch found the restore and read nothing")
        let reset = try await bridge.pool.read { db in try SyncState.remoteReset(db) }
        XCTAssertEqual(reset?.kind, .restored)
        let names = try await remote().fetchChanges(in: .private("alice"), since: nil, limit: 100).changed.map(\.id.name).sorted()
        XCTAssertEqual(names, ["n1"], "n1, which the copy lacked, is on the remote again")
        let local = try await bridge.pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM note") }
        XCTAssertEqual(local, ["n1"], "and still here")
    }

    /// The remote's clock is measured by the answers that carry the history:
    /// one that took long (a large page) says little of it. Here every fetch
    /// takes 60 ms and claims the remote's clock an hour behind; the offset
    /// stays as the quick answer before the first sync measured it, so n2
    /// goes up with the time of its commit, not an hour earlier.
    func testTheRemotesClock_isMeasuredByQuickAnswers_notBySlowOnes() async throws {
        let slow = BehindFetchRemote(base: remote(), delay: .milliseconds(60))
        let (app, _, engine) = try await firstSync(through: slow)
        _ = await engine.sync(complete: false, fetch: true)
        let editedAt = try await uploadN2(app, engine)
        XCTAssertLessThan(abs(editedAt.timeIntervalSinceNow), 60, "n2's edit time \(editedAt) was moved by a slow answer's clock")
    }

    /// A remote far away answers nothing within 20 ms: its answers measure
    /// its clock all the same when they take no more than twice the
    /// quickest. Every call here takes 40 ms; after the first sync the
    /// remote's clock falls an hour behind, and n2 goes up on that clock.
    func testAFarRemotesClock_isMeasuredByItsOrdinaryAnswers() async throws {
        let far = FarRemote(base: remote())
        let (app, _, engine) = try await firstSync(through: far)
        far.skew.withLock { $0 = -3600 }
        _ = await engine.sync(complete: false, fetch: true)
        let behind = try await uploadN2(app, engine).timeIntervalSinceNow
        XCTAssertLessThan(abs(behind + 3600), 60, "n2's edit time is on the remote's clock, an hour behind (it is \(behind) s)")
    }

    /// An answer whose remote clock was not read during the call (a gateway's
    /// page sent with its hint) does not measure the clock: every fetch here
    /// comes at once with the remote's clock an hour behind but not fresh,
    /// and n2 goes up with the time of its commit.
    func testAnAnswerReadBeforeTheCall_doesNotMeasureTheRemotesClock() async throws {
        let kept = BehindFetchRemote(base: remote(), fresh: false)
        let (app, _, engine) = try await firstSync(through: kept)
        _ = await engine.sync(complete: false, fetch: true)
        let editedAt = try await uploadN2(app, engine)
        XCTAssertLessThan(abs(editedAt.timeIntervalSinceNow), 60, "n2's edit time \(editedAt) was moved by a kept page's clock")
    }

    /// A running bridge's engine for group a through `counting`, after its
    /// first sync and a second that uploads row n1.
    private func twoSyncs(through counting: HistoryCountingRemote) async throws -> (app: GroupStore, bridge: GroupStore, engine: SyncEngine)
    {
        let (app, bridge, engine) = try await firstSync(through: counting)
        try await write(app, engine, "n1")
        let second = await engine.sync(complete: false, fetch: false)
        XCTAssertEqual(second.summary.uploaded, 1)
        XCTAssertEqual(counting.asked, 1, "the first sync asks; the second's upload carries the mark")
        return (app, bridge, engine)
    }

    /// A running bridge's engine for group a through `remote`, after its first sync.
    private func firstSync(through remote: any CloudDatabase) async throws -> (app: GroupStore, bridge: GroupStore, engine: SyncEngine) {
        let app = try open("a", schema: Self.schema)
        let bridge = try open("a", member: "cloud", schema: Self.schema)
        let engine = try await SyncEngine.make(
            store: bridge, configuration: try configuration("a", tables: ["note"], remote: remote),
            events: EventHub(label: "test", object: { nil }), tracer: SyncTracer(), oneShot: false)
        _ = await engine.sync(complete: false)
        return (app, bridge, engine)
    }

    /// Writes row n2, has a sync upload it, and returns its edit time as the remote stores it.
    private func uploadN2(_ app: GroupStore, _ engine: SyncEngine) async throws -> Date {
        try await write(app, engine, "n2")
        let third = await engine.sync(complete: false, fetch: false)
        XCTAssertEqual(third.summary.uploaded, 1, third.summary.error ?? "")
        let record = try await remote().fetchChanges(in: .private("alice"), since: nil, limit: 100).changed.first
        return try XCTUnwrap(record?.editedAt)
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

/// Counts the calls of ``CloudDatabase/history(keeping:)`` (`asked`), and
/// the fetches and uploads that carried a mark (`carried`), did not
/// (`withoutMark`), or found it no longer kept (`refused`); each passed to
/// the base remote's own form.
private final class HistoryCountingRemote: ForwardingRemote {
    struct Counts {
        var asked = 0
        var carried = 0
        var withoutMark = 0
        var refused = 0
    }
    let base: any CloudDatabase
    private let counts = Mutex(Counts())
    init(base: any CloudDatabase) {
        self.base = base
    }
    var asked: Int { counts.withLock { $0.asked } }
    var carried: Int { counts.withLock { $0.carried } }
    var withoutMark: Int { counts.withLock { $0.withoutMark } }
    var refused: Int { counts.withLock { $0.refused } }

    func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory {
        counts.withLock { $0.asked += 1 }
        return try await base.history(keeping: mark)
    }

    func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<[CloudModifyResult]> {
        let answer = try await base.modify(changes, keeping: mark)
        count(mark, answer.value == nil)
        return answer
    }

    func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        let answer = try await base.fetchChanges(in: zone, since: token, limit: limit, keeping: mark)
        count(mark, answer.value == nil)
        return answer
    }

    private func count(_ mark: CloudHistoryMark?, _ refused: Bool) {
        counts.withLock { counts in
            if mark == nil { counts.withoutMark += 1 } else { counts.carried += 1 }
            if refused { counts.refused += 1 }
        }
    }
}

/// A remote whose fetches claim its clock an hour behind: after `delay`
/// (a slow answer), or at once and not fresh (`fresh` false: a page read
/// before the call, as a gateway's pages are).
private final class BehindFetchRemote: ForwardingRemote {
    let base: any CloudDatabase
    let delay: Duration
    let fresh: Bool
    init(base: any CloudDatabase, delay: Duration = .zero, fresh: Bool = true) {
        self.base = base
        self.delay = delay
        self.fresh = fresh
    }

    func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        var answer = try await base.fetchChanges(in: zone, since: token, limit: limit, keeping: mark)
        if delay > .zero { try await Task.sleep(for: delay) }
        answer.history.now = answer.history.now.addingTimeInterval(-3600)
        answer.history.nowIsFresh = fresh
        return answer
    }
}

/// A remote 40 ms away whose clock is `skew` seconds off.
private final class FarRemote: ForwardingRemote {
    let base: any CloudDatabase
    let skew = Mutex<TimeInterval>(0)
    init(base: any CloudDatabase) { self.base = base }

    private func far(_ history: CloudRemoteHistory) async throws -> CloudRemoteHistory {
        try await Task.sleep(for: .milliseconds(40))
        var history = history
        history.now = history.now.addingTimeInterval(skew.withLock { $0 })
        return history
    }

    func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory {
        try await far(try await base.history(keeping: mark))
    }

    func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        var answer = try await base.fetchChanges(in: zone, since: token, limit: limit, keeping: mark)
        answer.history = try await far(answer.history)
        return answer
    }

    func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<[CloudModifyResult]> {
        var answer = try await base.modify(changes, keeping: mark)
        answer.history = try await far(answer.history)
        return answer
    }
}
