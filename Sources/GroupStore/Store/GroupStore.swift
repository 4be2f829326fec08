import Dispatch
import FolderWatching
import Foundation
import GRDB
import Logging
import Synchronization

/// A shared SQLite database whose saves every process of the group sees live.
///
/// ```swift
/// var configuration = GroupConfiguration(directory: "/var/lib/myapp/group", member: try MemberName("collector"))
/// configuration.migrator = migrator
/// let store = try await GroupStore.open(configuration)
///
/// // A daemon: the store and the app's services in one ServiceGroup, any order.
/// let group = ServiceGroup(configuration: .init(services: [store, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
/// try await group.run()
///
/// // Inside the app's service (subscribing late loses nothing):
/// try await store.write { db in try Item(name: "x").insert(db) }
/// for await save in store.saves() { print(save.seq, save.author, save.changes) }
/// ```
///
/// Opening creates the group directory if needed, runs your migrations,
/// tracks the tables, fixes where this member starts, and then takes its lock.
/// ``run()`` (or ``start()`` in a script) begins watching peers: from then on,
/// every transaction another process commits refreshes this process's GRDB
/// observations on ``pool`` and is delivered through ``saves()`` and as a
/// `.groupStoreDidSave` notification, in sequence order, once. Saves
/// committed while this member was down come first.
///
/// Write with ``write(_:)``: it records the transaction under this member's
/// name and publishes it. Writes made through ``pool`` directly, or by other
/// programs, are captured too and delivered with the author
/// ``Save/externalAuthor``.
public final class GroupStore: Sendable {
    /// The key of the ``Save`` in a `.groupStoreDidSave` notification's `userInfo`.
    public static let saveUserInfoKey = "save"

    /// `stopped`: its service was shut down: it no longer delivers, and
    /// still takes writes (an app shut down after it may still write).
    private enum Phase { case opened, started, stopped, closed }

    /// The shared database. Read and observe with it as with any GRDB pool.
    public let pool: DatabasePool
    /// This process's member name.
    public let member: MemberName
    /// The group directory.
    public var directoryPath: String { directory.path }

    let configuration: GroupConfiguration
    let directory: GroupDirectory
    let publisher: Publisher
    let delivery: Delivery
    private let feed: SaveFeed
    private let notifier: SaveNotifier
    private let pruner: Pruner
    private let folder: MemberFolder
    private let phase = Mutex(Phase.opened)
    /// `run()` or `start()` was called (a first subscriber also starts the store).
    private let runRequested = Atomic(false)
    private let pruneTimer = Mutex<TimerBox?>(nil)
    let logger: Logger
    let tracker: SchemaTracker
    /// The registry of tracked tables as the last write read it (used inside
    /// write transactions only, so never contended).
    let tableNames = Mutex(TableNames())
    /// The history's state as this process's last write left it (used
    /// inside write transactions only, so never contended).
    let knownState = Mutex(KnownHistoryState())
    /// The registry as the cloud bridge's reads of the history last read it
    /// (its intake and its apply run a read of the history each).
    let bridgeNames = Mutex(TableNames())
    /// What the bridge folded of the write transaction in progress, for its
    /// seal (used inside write transactions only, so never contended).
    let openFold = Mutex<OpenTransactionFold?>(nil)

    /// Opens (creating if allowed) the group and joins it as `configuration.member`,
    /// blocking the calling thread while the database opens and migrations
    /// run. For the package's own tools; apps use ``open(_:)``.
    ///
    /// - Throws: ``GroupStoreError`` (for example ``GroupStoreError/Code/memberAlreadyLive``).
    package init(_ configuration: GroupConfiguration) throws {
        let member = configuration.member
        let logger = configuration.logger
        if configuration.migrator?.eraseDatabaseOnSchemaChange == true {
            // GRDB would find the history's tables and triggers "changed" and
            // erase the shared database, every member's data, at each open.
            throw GroupStoreError(
                .invalidConfiguration,
                "the migrator of member '\(member)' has eraseDatabaseOnSchemaChange set, which would erase the group's shared database "
                    + "at every open: turn it off (to start over, delete the group directory \(configuration.directory))",
                path: configuration.directory)
        }
        let directory = try GroupDirectory(path: configuration.directory, create: configuration.createIfMissing)
        let folder = try directory.memberFolder(member, create: true)
        // Fail fast when the name is taken; the lock itself is taken once
        // this member's starting point is durable (so a member reported live
        // never misses a commit made after that).
        if let holder = MemberLock.liveHolder(in: folder) {
            let who = holder.map { " (pid \($0))" } ?? ""
            throw GroupStoreError(
                .memberAlreadyLive, "member '\(member)' is already live in group \(directory.path)\(who)", path: folder.path)
        }
        try directory.prepareDatabaseFile()
        try directory.checkWritable(by: member, folder: folder)

        let tracker = SchemaTracker(tracked: configuration.trackedTables, logger: logger)
        let (pool, start, sealed, schemaVersion) = try directory.withSetupLock {
            let pool: DatabasePool
            do {
                pool = try directory.openPool(configuration: configuration.databaseConfiguration)
            } catch {
                throw GroupStoreError(.database, "cannot open database \(directory.databasePath): \(error)", path: directory.databasePath)
            }
            let sealed = try GroupJoin.prepareSchema(pool: pool, tracker: tracker, configuration: configuration, directory: directory)
            let start = try GroupJoin.startingPoint(
                pool: pool, member: member, folder: folder, directory: directory, writesOnly: configuration.writesOnly, logger: logger)
            return (pool, start, sealed, try GroupJoin.clearedWriterCache(pool: pool, directory: directory))
        }
        let lock = try MemberLock(member: member, folder: folder, group: directory.path)

        let scope = configuration.inScopeEntityNames.map(EntityNameSet.init)
        let history = HistoryPageReader(pool: pool, member: member, scope: scope)
        let metrics = GroupMetrics(group: directory.path, member: member.rawValue)
        let box = WeakStoreBox()
        let feed = SaveFeed(
            cursor: start.cursor.seq, readHistory: { after, through in await history.page(after: after, through: through) },
            fellBack: { metrics.fellBackToHistory() }, recordAfterStop: { await box.store?.recordProcessedAfterStop() })
        var posted: (@Sendable (Int64, Int) -> Void)?
        if configuration.notificationsCountAsProcessed {
            posted = { seq, generation in feed.markProcessed(seq, generation: generation) }
        }
        let notifier = SaveNotifier(
            label: "GroupStore.Notifier.\(member)", object: { box.store }, posted: posted, enabled: configuration.postsNotifications)
        let memberFolder = MemberFolder(member: member, directory: directory, folder: folder, lock: lock)
        let publisher = Publisher(member: member, folder: memberFolder, logger: logger, metrics: metrics)
        let historyConnection: HistoryConnection
        do {
            historyConnection = try HistoryConnection(path: directory.databasePath, configuration: configuration.databaseConfiguration)
        } catch {
            throw GroupStoreError(.database, "cannot open database \(directory.databasePath): \(error)", path: directory.databasePath)
        }
        let merger = Merger(
            pool: pool, connection: historyConnection, settings: .init(member: member, inScopeEntityNames: scope), tracker: tracker,
            start: start, logger: logger)

        self.pool = pool
        self.member = member
        self.configuration = configuration
        self.directory = directory
        self.publisher = publisher
        self.folder = memberFolder
        self.delivery = Delivery(
            pool: pool, merger: merger, start: start, persistsCursor: !configuration.writesOnly,
            observers: ObserverRefresh(schemaVersion: schemaVersion),
            settings: .init(cursorFlushInterval: configuration.cursorFlushInterval, synchronousDelivery: configuration.synchronousDelivery),
            folder: memberFolder, feed: feed, notifier: notifier, metrics: metrics, logger: logger)
        self.feed = feed
        self.notifier = notifier
        self.pruner = Pruner(pool: pool, directory: directory, retention: configuration.retention, logger: logger)
        self.logger = logger
        self.tracker = tracker
        box.store = self
        if let sealed { committed(sealed) }
        if !configuration.writesOnly && configuration.warnsWhenNotStarted {
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.notStartedGrace) { [weak self] in self?.warnIfNeverStarted() }
        }
        logger.info(
            "joined group",
            metadata: ["group": "\(directory.path)", "member": "\(member)", "cursor": "\(start.cursor.seq)", "resync": "\(start.resync)"])
    }

    /// Opens (creating if allowed) the group and joins it as
    /// `configuration.member`: creates the group directory if needed, runs
    /// your migrations, tracks the tables, fixes where this member starts,
    /// and takes its lock. Runs off the Swift concurrency pool.
    ///
    /// - Throws: ``GroupStoreError``: ``GroupStoreError/Code/memberAlreadyLive``
    ///   when another process runs as this member, ``GroupStoreError/Code/permissionDenied``
    ///   for a group this process cannot write, ``GroupStoreError/Code/migrationFailed``
    ///   naming the migration that failed.
    public static func open(_ configuration: GroupConfiguration) async throws -> GroupStore {
        try await offThePool { try GroupStore(configuration) }
    }

    /// Starts watching the group and delivering saves (first those committed
    /// while this member was down), off the Swift concurrency pool.
    ///
    /// The store's ``run()`` calls it, and so does the first save a
    /// ``saves()`` stream asks for: a script rarely needs it. Subscribing may
    /// come before or after: a subscriber gets every save no subscriber has
    /// processed yet. Idempotent; after a failure, it may be called again.
    public func start() async throws {
        try await offThePool { try self.startBlocking() }
    }

    /// ``start()`` on the calling thread, which it blocks briefly (not from a task).
    public func startBlocking() throws {
        runRequested.store(true, ordering: .relaxed)
        try startDelivering()
    }

    /// Starts delivering, for ``startBlocking()`` or a first subscriber.
    private func startDelivering() throws {
        switch phase.withLock({ $0 }) {
        case .started: return
        case .stopped, .closed: throw closedError
        case .opened: break
        }
        do throws(FolderWatcherError) {
            // Idempotent, and serialised with closing on the delivery's queue.
            try delivery.start()
        } catch {
            throw GroupStoreError(
                .fileSystem, "cannot watch group \(directory.path): \(error)", path: directory.path, errno: error.errno,
                underlying: error)
        }
        let started = phase.withLock { phase -> Bool in
            guard phase == .opened else { return false }
            phase = .started
            return true
        }
        if started { startPruning() }
    }

    /// Prunes on a timer (``GroupConfiguration/pruneInterval``) until the store closes.
    private func startPruning() {
        guard let interval = configuration.pruneInterval else { return }
        let pruner = self.pruner
        let logger = self.logger
        pruneTimer.withLock { box in
            // Stopped or closed meanwhile: no timer outlives the store. (Made
            // only past this check: libdispatch traps when a timer that was
            // never activated is released.)
            guard phase.withLock({ $0 }) == .started else { return }
            let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
            timer.setEventHandler {
                do { _ = try pruner.prune() } catch { logger.info("pruning failed", metadata: ["error": "\(error)"]) }
            }
            box = TimerBox(timer: timer)
            timer.activate()
        }
    }

    /// Stops watching, persists the cursor, finishes every ``saves()`` stream,
    /// closes the database and releases the member name, off the Swift
    /// concurrency pool. Idempotent. Safe to call from a `.groupStoreDidSave`
    /// observer on any queue, from a saves loop and from a synchronous
    /// delivery handler.
    public func close() async {
        await offThePool { self.closeBlocking() }
    }

    /// ``close()`` on the calling thread, which it blocks while the delivery
    /// and the publisher finish (briefly; not from a task).
    public func closeBlocking() {
        let wasOpen = phase.withLock { phase -> Bool in
            defer { phase = .closed }
            return phase != .closed
        }
        guard wasOpen else { return }
        pruneTimer.withLock { $0?.timer.cancel() }
        notifier.close()
        delivery.close()
        publisher.flush()
        feed.finish()
        try? pool.close()
        folder.release()
        logger.info("left group", metadata: ["group": "\(directory.path)", "member": "\(member)"])
    }

    deinit {
        closeBlocking()
    }

    /// A stream of saves: every save of other members after the last one a
    /// subscriber processed (at first, this member's durable cursor: the saves
    /// committed while it was down), then each new one, in sequence order.
    /// Subscribing before or after ``start()`` makes no difference; each
    /// subscriber gets every save.
    ///
    /// A save counts as processed when the loop asks for the next one (see
    /// ``SaveStream``). A slow subscriber holds at most a bounded number of
    /// saves in memory; beyond, it reads the history.
    /// The stream ends when the store closes, its task is cancelled, or its
    /// service is shut down gracefully (see ``SaveStream``).
    public func saves() -> SaveStream {
        feed.subscribe { [weak self] in await self?.startForSubscriber() }
    }

    /// A subscriber asks for its first save: a store that was never run (left
    /// out of the `ServiceGroup`, or `start()` forgotten) starts delivering
    /// now rather than leave the loop waiting for ever. A `ServiceGroup`
    /// starts its services together, so the store's `run()` may come just
    /// after its subscriber: that is said only when nothing ran the store
    /// within ``notRunGrace``.
    private func startForSubscriber() async {
        guard phase.withLock({ $0 == .opened }) else { return }
        do {
            try await offThePool { try self.startDelivering() }
        } catch {
            logger.info("cannot start delivering for a saves() subscriber", metadata: ["member": "\(member)", "error": "\(error)"])
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.notRunGrace) { [weak self] in
            guard let self, !runRequested.load(ordering: .relaxed), phase.withLock({ $0 == .started }) else { return }
            logger.info(
                "a saves() subscriber started delivery: the store was not run (put it in the ServiceGroup, or call start())",
                metadata: ["group": "\(directory.path)", "member": "\(member)"])
        }
    }

    /// How long a store started by a subscriber waits for its `run()` or
    /// `start()` before saying it was not run.
    static let notRunGrace: TimeInterval = 1
    /// How long after opening a store that nothing started says so.
    static let notStartedGrace: TimeInterval = 3

    /// Says so when the store was opened ``notStartedGrace`` ago and still
    /// delivers nothing: its `.groupStoreDidSave` observers and `saves()`
    /// loops are deaf until it runs.
    private func warnIfNeverStarted() {
        guard phase.withLock({ $0 == .opened }) else { return }
        logger.info(
            "member '\(member)' has not started delivering \(Int(Self.notStartedGrace)) s after it opened: no .groupStoreDidSave is posted and no saves() loop gets a save until it runs (put it in the ServiceGroup, or call start(); a member that only writes sets writesOnly)",
            metadata: ["group": "\(directory.path)", "member": "\(member)"])
    }

    /// Stops delivering and persists the cursor, and goes on taking writes
    /// (its service was shut down gracefully; see ``run()``). Idempotent.
    func stopDelivering() async {
        let wasRunning = phase.withLock { phase -> Bool in
            guard phase == .opened || phase == .started else { return false }
            phase = .stopped
            return true
        }
        guard wasRunning else { return }
        pruneTimer.withLock { $0?.timer.cancel() }
        notifier.close()
        await offThePool { self.delivery.stop() }
        feed.deliveryStopped()
        await flushPublications()
        logger.info("stopped delivering; writes still commit", metadata: ["group": "\(directory.path)", "member": "\(member)"])
    }

    /// A subscriber finished a save after delivery stopped (its service is
    /// shut down after the store's): the cursor is written now, while this
    /// process still holds the member's lock, so the save is not delivered
    /// again at the next start.
    private func recordProcessedAfterStop() async {
        guard phase.withLock({ $0 == .stopped }) else { return }
        await offThePool { self.delivery.flushCursorAfterStop() }
    }

    /// Why this store left the group, if the group directory or its database
    /// was removed or replaced while it ran (then writes throw it, and the
    /// ``saves()`` streams have finished).
    public var groupReplacedError: GroupStoreError? {
        delivery.departureError
    }

    /// The last sequence number merged: delivered to the subscribers (or
    /// skipped as not for this member). Never waits.
    public var cursor: Int64 {
        delivery.publicCursor.withLock { $0 }
    }

    /// How far the subscribers have processed the saves (see ``SaveFeed/safeCursor()``).
    var feedProcessedThrough: Int64 { feed.safeCursor() }

    /// Prunes now; see ``GroupConfiguration/retention``.
    @discardableResult
    public func prune(now: Date = Date()) throws -> PruneReport {
        try checkOpen()
        do {
            return try pruner.prune(now: now)
        } catch let error as GroupStoreError {
            throw error
        } catch {
            throw GroupStoreError(.database, "cannot prune \(directory.databasePath): \(error)", path: directory.databasePath)
        }
    }

    func checkOpen() throws(GroupStoreError) {
        if phase.withLock({ $0 == .closed }) { throw closedError }
        if let departed = delivery.departureError { throw departed }
    }

    private var closedError: GroupStoreError {
        GroupStoreError(.closed, "the store of member '\(member)' in \(directory.path) is closed", path: directory.path)
    }
}

/// Lets the did-save notifications name the store as their `object` without
/// a retain cycle.
///
/// `@unchecked Sendable`: `store` is set once, in the store's initialiser,
/// before anything can be posted, and only read afterwards.
private final class WeakStoreBox: @unchecked Sendable {
    weak var store: GroupStore?
}

/// Holds a dispatch timer across threads.
///
/// `@unchecked Sendable`: the timer is only `cancel()`led after creation,
/// which dispatch allows from any thread.
private struct TimerBox: @unchecked Sendable {
    let timer: any DispatchSourceTimer
}
