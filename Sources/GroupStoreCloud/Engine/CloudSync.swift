import Foundation
import GRDB
import GroupStore
import Logging
import ServiceLifecycle
import Synchronization

/// Keeps a group's chosen tables in sync with a remote database.
///
/// ```swift
/// let remote = try EmbeddedRemote(path: "/srv/groupstore/cloud.sqlite", user: "alice")   // GroupStoreCloudEmbedded
/// var configuration = CloudSyncConfiguration(group: directory, remote: remote)
/// configuration.privateTables = ["note", "tag", "note_tag"]
/// let sync = CloudSync(configuration)
/// // The remote is a Service too: listed before the bridge, it stops after it.
/// let group = ServiceGroup(configuration: .init(services: [store, remote, sync, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
/// try await group.run()
/// ```
///
/// The bridge joins the group as its own member (``CloudSyncConfiguration/member``,
/// `cloud` by default), whose lock makes it the group's one syncing member;
/// another process running a bridge for the same group stands by and takes
/// over when the first ends, however it ends. Every change committed to the
/// synced tables — by any member, or by the `sqlite3` shell — is uploaded;
/// remote changes are applied as transactions of `cloud` and reach every
/// member as saves.
public final class CloudSync: Service, Sendable {
    public let configuration: CloudSyncConfiguration
    private let hub: EventHub
    /// Wakes the running session's sync loop (none while standing by).
    private let currentWake = Mutex<AsyncStream<Void>.Continuation?>(nil)
    private let completeRequested = Mutex(false)
    /// Whether the next sync fetches: a push hint, the timer, a retry or
    /// ``triggerSync(complete:)`` asked for it. A sync woken only by local
    /// saves uploads them without fetching first (a conflict with a change
    /// not fetched yet is answered by the remote and settled all the same).
    private let fetchRequested = Mutex(true)
    /// The benchmark's view of each stage (``traceStages(_:)``).
    let tracer = SyncTracer()

    public init(_ configuration: CloudSyncConfiguration) {
        self.configuration = configuration
        let box = WeakSyncBox()
        hub = EventHub(label: configuration.group, object: { box.sync })
        box.sync = self
    }

    /// The sync events, from now on, until the bridge is gone.
    public func events() -> AsyncStream<CloudSyncEvent> {
        hub.subscribe()
    }

    /// Asks for a sync now; `complete` lists every zone again and compares
    /// every synced table with its last synced state (a full resync; pending
    /// local edits are kept, and records parked on upload are retried).
    public func triggerSync(complete: Bool = false) {
        if complete { completeRequested.withLock { $0 = true } }
        fetchRequested.withLock { $0 = true }
        _ = currentWake.withLock { $0?.yield() }
    }

    private var storeConfiguration: GroupConfiguration {
        var store = GroupConfiguration(directory: configuration.group, member: configuration.member, logger: configuration.logger)
        store.inScopeEntityNames = Set(configuration.privateTables + configuration.publicTables + configuration.sharedTables)
        // The bridge's own commits skip the fsync of each commit (still
        // atomic and crash-safe; only a power loss can undo the last ones).
        // That loses nothing: an undone apply takes its token with it and is
        // fetched again; an undone acknowledgement is uploaded again and meets
        // its own values on the remote (no conflict); undone intake is redone.
        store.prepareDatabase = { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        return store
    }

    /// One full sync now, as the group's syncing member, then leaves.
    /// - Throws: ``CloudSyncError/Code/syncingElsewhere`` if another process
    ///   is the syncing member; configuration errors (a refused table). A
    ///   failing remote is reported in the summary's ``CloudSyncSummary/error``.
    public func syncOnce(complete: Bool = false) async throws -> CloudSyncSummary {
        let store: GroupStore
        var storeConfiguration = self.storeConfiguration
        storeConfiguration.warnsWhenNotStarted = false
        let (group, member) = (configuration.group, configuration.member)
        let joinsNow = await offThePool {
            !FileManager.default.fileExists(atPath: "\(group)/members/\(member.rawValue)")
        }
        do {
            store = try await GroupStore.open(storeConfiguration)
        } catch let error as GroupStoreError where error.code == .memberAlreadyLive {
            throw CloudSyncError(
                .syncingElsewhere, "another process is syncing group \(configuration.group) (\(error.message))", underlying: error)
        } catch {
            throw CloudSyncError.wrap(error, "open group \(configuration.group)")
        }
        do {
            let engine = try await SyncEngine.make(store: store, configuration: configuration, events: hub, tracer: tracer, oneShot: true)
            // The engine's queue is the sync's task executor too, as in ``run()``: the remote's calls
            // (an embedded remote's SQLite work) then run on it, not off the pool and back at each call.
            let result = await withTaskExecutorPreference(engine.executor) { await engine.sync(complete: complete) }
            await store.close()
            return result.summary
        } catch {
            await store.close()
            // Refused before it ever synced: a member that joined for this sync leaves the group
            // again, rather than stay behind holding back pruning with a cursor nobody moves.
            if joinsNow { _ = try? await offThePool { try GroupInspector(directory: group).retire(member) } }
            throw CloudSyncError.wrap(error, "start syncing group \(configuration.group)")
        }
    }

    /// Syncs continuously — on local saves, push hints, a timer and
    /// ``triggerSync(complete:)`` — until cancelled or shut down gracefully.
    /// Stands by while another process is the syncing member.
    public func run() async throws {
        defer { hub.finish() }
        do {
            try await cancelWhenGracefulShutdown { try await self.runUntilCancelled() }
        } catch is CancellationError {
            // Shut down: not a failure.
        }
    }

    private func runUntilCancelled() async throws {
        let store = try await acquire()
        hub.emit(.active)
        do {
            // The store's start blocks briefly (its watches are set up): off the concurrency pool.
            try await offThePool { try store.startBlocking() }
            // A synced table's schema changed (a reset): map the tables again.
            while try await session(
                store: store,
                engine: try await SyncEngine.make(
                    store: store, configuration: configuration, events: hub, tracer: tracer, oneShot: false))
            {
                configuration.logger.info(
                    "a synced table changed its schema: mapping the tables again", metadata: ["group": "\(configuration.group)"])
            }
        } catch is CancellationError {
            await store.close()
            throw CancellationError()
        } catch {
            await store.close()
            throw CloudSyncError.wrap(error, "sync group \(configuration.group)")
        }
        await store.close()
    }

    /// Syncs with one engine until the first of its loops ends
    /// (``SessionLoopEnd``, logged unless the session was shut down); returns
    /// whether the engine asks to map the tables again.
    /// - Throws: the store's departure (the group was removed or replaced).
    private func session(store: GroupStore, engine: SyncEngine) async throws -> Bool {
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        currentWake.withLock { $0 = wake }
        defer { currentWake.withLock { $0 = nil } }
        let remote = configuration.remote
        let interval = configuration.fetchInterval
        wakeToFetch(wake)
        // The loops run on the engine's queue, as the engine does: waking one
        // from another is a job on that queue, not a thread hand-off.
        let queue = engine.executor
        let ended = try await withThrowingTaskGroup(of: SessionLoopEnd.self) { group in
            // Local saves: each is taken in (its keys durably pending) before the loop asks
            // for the next one, so the member's cursor never passes a save not taken in; then
            // a sync is woken to upload it. The saves that came meanwhile are taken in together,
            // in one transaction (a burst of commits costs one intake, not one each).
            let tracer = self.tracer
            group.addTask(executorPreference: queue) {
                let saves = store.saves()
                while let batch = await saves.nextBatch(limit: Self.intakeBatchLimit) {
                    tracer.mark(.saveSeen)
                    guard await engine.takeIn(delivered: batch) else { return .intakeStopped }
                    wake.yield()
                }
                return .savesEnded
            }
            group.addTask(executorPreference: queue) { [self] in
                for await _ in remote.pushHints() {
                    tracer.mark(.hintSeen)
                    wakeToFetch(wake)
                }
                return .pushHintsEnded
            }
            group.addTask(executorPreference: queue) { [self] in
                while !Task.isCancelled {
                    do { try await Task.sleep(nanoseconds: UInt64(interval * 1e9)) } catch { return .cancelled }
                    wakeToFetch(wake)
                }
                return .cancelled
            }
            group.addTask(executorPreference: queue) { [self] in
                var failures = 0
                for await _ in wakes {
                    let complete = completeRequested.withLock { value in
                        defer { value = false }
                        return value
                    }
                    let fetch = fetchRequested.withLock { value in
                        defer { value = false }
                        return value
                    }
                    let result = await engine.sync(complete: complete, fetch: fetch)
                    if Task.isCancelled { return .cancelled }
                    if result.tablesChanged { return .tablesChanged }
                    if result.summary.error != nil {
                        failures += 1
                        // A failed sync (the remote down, say) is tried again after a growing wait.
                        let delay = Retry.delay(afterFailure: failures + 1, configuration)
                        do { try await Task.sleep(nanoseconds: UInt64(delay * 1e9)) } catch { return .cancelled }
                        wakeToFetch(wake)
                    } else {
                        failures = 0
                    }
                }
                return .cancelled
            }
            let first = try await group.next() ?? .cancelled
            group.cancelAll()
            return first
        }
        if ended != .cancelled && ended != .tablesChanged {
            configuration.logger.info("a loop of the bridge ended: \(ended.sentence)", metadata: ["group": "\(configuration.group)"])
        }
        if let departed = store.groupReplacedError {
            throw CloudSyncError(.store, "stopped syncing: \(departed.message)", underlying: departed)
        }
        return ended == .tablesChanged
    }

    /// The most saves taken in in one transaction.
    static let intakeBatchLimit = 512

    /// Wakes the sync loop for a sync that fetches.
    private func wakeToFetch(_ wake: AsyncStream<Void>.Continuation) {
        fetchRequested.withLock { $0 = true }
        wake.yield()
    }

    /// Opens the group as the syncing member, standing by while another
    /// process is.
    private func acquire() async throws -> GroupStore {
        var announced = false
        while true {
            try Task.checkCancellation()
            do {
                return try await GroupStore.open(storeConfiguration)
            } catch let error as GroupStoreError where error.code == .memberAlreadyLive {
                if !announced {
                    configuration.logger.info("standing by", metadata: ["group": "\(configuration.group)", "holder": "\(error.message)"])
                    hub.emit(.standby(holder: error.message))
                    announced = true
                }
                try await Task.sleep(nanoseconds: UInt64(configuration.standbyInterval * 1e9))
            } catch {
                throw CloudSyncError.wrap(error, "open group \(configuration.group)")
            }
        }
    }
}

/// Lets the notifications name the bridge as their `object` without a cycle.
///
/// `@unchecked Sendable`: `sync` is set once, in the initialiser, before any
/// event can be emitted, and only read afterwards (from the events' queue);
/// loading a weak reference is safe from any thread.
private final class WeakSyncBox: @unchecked Sendable {
    weak var sync: CloudSync?
}
