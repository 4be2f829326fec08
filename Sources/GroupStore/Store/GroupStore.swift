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
/// let store = try GroupStore(configuration)
///
/// let saves = store.saves()               // subscribe first…
/// try store.start()                       // …then start delivering
/// try store.write { db in try Item(name: "x").insert(db) }
/// for await save in saves { print(save.seq, save.author, save.changes) }
/// ```
///
/// Opening creates the group directory if needed, takes this member's lock,
/// opens the shared ``pool`` (WAL), runs your migrations and installs the
/// history triggers. ``start()`` begins watching peers: from then on, every
/// transaction another process commits refreshes this process's GRDB
/// observations on ``pool`` and is delivered through ``saves()`` and as a
/// `.groupStoreDidSave` notification, in sequence order, once. Saves committed
/// while this member was down are delivered on start.
///
/// Write with ``write(_:)``: it records the transaction under this member's
/// name and publishes it. Writes made through ``pool`` directly, or by other
/// programs, are captured too and delivered with the author
/// ``Save/externalAuthor``.
public final class GroupStore: Sendable {
    /// The key of the ``Save`` in a `.groupStoreDidSave` notification's `userInfo`.
    public static let saveUserInfoKey = "save"

    private enum Phase { case opened, started, closed }

    /// The shared database. Read and observe with it as with any GRDB pool.
    public let pool: DatabasePool
    /// This process's member name.
    public let member: MemberName
    /// The group directory.
    public var directoryPath: String { directory.path }

    let configuration: GroupConfiguration
    let directory: GroupDirectory
    let publisher: Publisher
    let merger: Merger
    private let watch: GroupWatch
    private let feed: SaveFeed
    private let notifier: SaveNotifier
    private let pruner: Pruner
    private let lock: Mutex<MemberLock?>
    private let phase = Mutex(Phase.opened)
    /// Serialises ``start()`` (which may fail and be called again).
    private let startLock = Mutex(())
    /// Set when the group directory or database was replaced under this member.
    private let detachment = Mutex<GroupStoreError?>(nil)
    private let pruneTimer = Mutex<TimerBox?>(nil)
    private let logger: Logger
    let tracker: SchemaTracker

    /// Opens (creating if allowed) the group and joins it as `configuration.member`.
    ///
    /// Blocks while the database opens and migrations run; from async code,
    /// prefer ``open(_:)``.
    ///
    /// - Throws: ``GroupStoreError`` (for example ``GroupStoreError/Code/memberAlreadyLive``).
    public init(_ configuration: GroupConfiguration) throws {
        let member = configuration.member
        let logger = configuration.logger
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

        let tracker = SchemaTracker(tracked: configuration.trackedTables, logger: logger)
        let (pool, start, sealed) = try directory.withSetupLock {
            let pool: DatabasePool
            do {
                pool = try DatabasePool(path: directory.databasePath, configuration: configuration.databaseConfiguration)
            } catch {
                throw GroupStoreError(.database, "cannot open database \(directory.databasePath): \(error)", path: directory.databasePath)
            }
            let sealed = try Self.prepareSchema(pool: pool, tracker: tracker, configuration: configuration, directory: directory)
            let start = try Self.startingPoint(pool: pool, member: member, folder: folder, directory: directory, logger: logger)
            return (pool, start, sealed)
        }
        let lock = try MemberLock(member: member, folder: folder, group: directory.path)

        let scope = configuration.inScopeEntityNames.map(EntityNameSet.init)
        let history = HistoryPageReader(pool: pool, member: member, scope: scope)
        let feed = SaveFeed(cursor: start.cursor.seq, readHistory: { after, through in await history.page(after: after, through: through) })
        let box = WeakStoreBox()
        let notifier = SaveNotifier(label: "GroupStore.Notifier.\(member)", object: { box.store })
        let publisher = Publisher(pool: pool, member: member, directory: directory, folder: folder, logger: logger)
        let queue = DispatchQueue(label: "GroupStore.Merger.\(member)")
        let merger = Merger(
            queue: queue, pool: pool,
            settings: .init(member: member, inScopeEntityNames: scope, cursorFlushInterval: configuration.cursorFlushInterval),
            directory: directory, folder: folder, tracker: tracker, feed: feed, notifier: notifier, start: start,
            logger: logger)

        self.pool = pool
        self.member = member
        self.configuration = configuration
        self.directory = directory
        self.publisher = publisher
        self.merger = merger
        self.watch = GroupWatch(
            merger: merger, directory: directory, member: member, logger: logger,
            hooks: GroupWatch.Hooks(
                groupReplaced: { reason in box.store?.detach(reason) },
                ownFolderRemoved: { box.store?.repairOwnFolder() }))
        self.feed = feed
        self.notifier = notifier
        self.pruner = Pruner(pool: pool, directory: directory, retention: configuration.retention, logger: logger)
        self.lock = Mutex(lock)
        self.logger = logger
        self.tracker = tracker
        box.store = self
        if let sealed { publisher.publish(sealed) }
        logger.info(
            "joined group",
            metadata: ["group": "\(directory.path)", "member": "\(member)", "cursor": "\(start.cursor.seq)", "resync": "\(start.resync)"])
    }

    /// Opens the group off the Swift concurrency pool (the open blocks on I/O).
    public static func open(_ configuration: GroupConfiguration) async throws -> GroupStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try GroupStore(configuration) })
            }
        }
    }

    /// Creates (or upgrades) the history, runs the migrations and tracks the
    /// tables. Takes SQLite's write lock only when something needs writing, and
    /// then waits for it as long as another process holds it.
    /// - Returns: the sequence number of what the migrations committed, if anything.
    private static func prepareSchema(
        pool: DatabasePool, tracker: SchemaTracker, configuration: GroupConfiguration, directory: GroupDirectory
    ) throws -> Int64? {
        let logger = configuration.logger
        do {
            let migrator = configuration.migrator
            let needsWrite = try pool.read { db -> Bool in
                if try HistorySchema.status(db) != .current { return true }
                if try SchemaTracker.needsRefresh(db) { return true }
                return try !(migrator?.hasCompletedMigrations(db) ?? true)
            }
            guard needsWrite else { return nil }
            try WriteLockWait.retrying(logger: logger, path: directory.databasePath) {
                try pool.write { db in
                    // A new history adopts the tables already there; schema
                    // changes made outside the library while no member ran are
                    // theirs (a table created then is delivered whole), not
                    // this member's.
                    if try HistorySchema.create(db) {
                        try tracker.refresh(db, adopt: true)
                    } else if try SchemaTracker.needsRefresh(db) {
                        try tracker.refresh(db)
                    }
                    try HistorySchema.closeOpenTransaction(db)
                }
            }
            if let migrator {
                try WriteLockWait.retrying(logger: logger, path: directory.databasePath) { try migrator.migrate(pool) }
            }
            return try WriteLockWait.retrying(logger: logger, path: directory.databasePath) {
                try pool.write { db -> Int64? in
                    // Tables the migrations created are tracked, their rows recorded.
                    if try SchemaTracker.needsRefresh(db) { try tracker.refresh(db) }
                    return try HistorySchema.seal(db, author: configuration.member, committedAt: Date())
                }
            }
        } catch let error as GroupStoreError {
            throw error
        } catch let error as DatabaseError {
            throw GroupStoreError(
                .database, "cannot prepare database \(directory.databasePath): \(error.message ?? "\(error)")",
                path: directory.databasePath, underlying: error)
        } catch {
            throw GroupStoreError(
                .database, "cannot prepare database \(directory.databasePath): \(error)", path: directory.databasePath,
                underlying: error)
        }
    }

    /// Where this member starts: its durable cursor if it belongs to this
    /// history, else a resync; a new member starts at the present, fixed
    /// before the member is reported live (and written when it starts).
    private static func startingPoint(
        pool: DatabasePool, member: MemberName, folder: DirectoryHandle, directory: GroupDirectory, logger: Logger
    ) throws -> Merger.Start {
        let file = CursorFile.read(in: folder)
        let (head, epoch, fingerprint) = try pool.read { db -> (Int64, String, Double?) in
            let last = try HistorySchema.lastSeq(db)
            let seq = file?.seq ?? last
            return (
                try HistorySchema.lastSeq(db), try String.fetchOne(db, sql: "SELECT value FROM \(HistorySchema.metaTable) WHERE key = 'epoch'") ?? "",
                try Double.fetchOne(
                    db, sql: "SELECT committed_at FROM \(HistorySchema.transactionTable) WHERE seq = ?", arguments: [seq])
            )
        }
        guard let file else {
            // Written when the member starts delivery (a member that only
            // writes keeps none); fixed now, before the member is live.
            return Merger.Start(cursor: CursorFile(seq: head, epoch: epoch, fingerprint: fingerprint), resync: false, onDisk: false)
        }
        var problem: String?
        if let known = file.epoch, known != "-", known != epoch {
            problem = "the database is another group's (or its history was recreated)"
        } else if file.seq > head {
            problem = "the cursor \(file.seq) is past the newest transaction \(head) (a restored or reset database)"
        } else if let expected = file.fingerprint, let found = fingerprint, abs(expected - found) > 0.001 {
            problem = "transaction \(file.seq) is not the one this member saw (a restored database)"
        }
        if let problem {
            logger.info("member will resync: \(problem)", metadata: ["member": "\(member)"])
        }
        return Merger.Start(
            cursor: CursorFile(seq: file.seq, epoch: epoch, fingerprint: file.fingerprint), resync: problem != nil, onDisk: true)
    }

    /// Starts watching the group and delivering saves (first those committed
    /// while this member was down). From now on this member is a *consumer*:
    /// its cursor is kept on disk and holds back pruning until its saves are
    /// processed. A process that only writes never starts, and pins nothing.
    ///
    /// Subscribing with ``saves()`` may come before or after: a subscriber
    /// gets every save no subscriber has processed yet. Idempotent; after a
    /// failure, it may be called again.
    public func start() throws {
        try startLock.withLock { _ throws(GroupStoreError) in
            switch phase.withLock({ $0 }) {
            case .started: return
            case .closed: throw closedError
            case .opened: break
            }
            do throws(FolderWatcherError) {
                try watch.start()
            } catch {
                merger.queue.sync { watch.stop() }
                throw GroupStoreError(
                    .fileSystem, "cannot watch group \(directory.path): \(error)", path: directory.path, errno: error.errno,
                    underlying: error)
            }
            let merger = self.merger
            merger.queue.async { merger.startConsuming() }
            let started = phase.withLock { phase -> Bool in
                guard phase == .opened else { return false }
                phase = .started
                return true
            }
            guard started else { return }
            startPruning()
        }
    }

    /// Prunes on a timer (``GroupConfiguration/pruneInterval``) until the store closes.
    private func startPruning() {
        guard let interval = configuration.pruneInterval else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        let pruner = self.pruner
        let logger = self.logger
        timer.setEventHandler {
            do { _ = try pruner.prune() } catch { logger.info("pruning failed", metadata: ["error": "\(error)"]) }
        }
        pruneTimer.withLock { box in
            // Closed meanwhile: no timer outlives the store.
            guard phase.withLock({ $0 }) != .closed else { return }
            box = TimerBox(timer: timer)
            timer.activate()
        }
    }

    /// Stops watching, persists the cursor, finishes every ``saves()`` stream,
    /// closes the database and releases the member name. Idempotent.
    ///
    /// Blocks while the merger and the publisher finish (briefly); from async
    /// code the `async` variant does it off the concurrency pool. Safe to call
    /// from a `.groupStoreDidSave` observer on any queue and from a saves loop.
    @_disfavoredOverload
    public func close() {
        close(endingStreams: true)
    }

    /// - Parameter endingStreams: end the ``saves()`` loops. Not when the
    ///   store's own service is shut down gracefully: in a `ServiceGroup` the
    ///   services before it (an app's saves loop) are shut down after it, and
    ///   a loop ending first would count as a service failing.
    func close(endingStreams: Bool) {
        let wasOpen = phase.withLock { phase -> Bool in
            defer { phase = .closed }
            return phase != .closed
        }
        guard wasOpen else { return }
        pruneTimer.withLock { $0?.timer.cancel() }
        notifier.close()
        merger.queue.sync {
            watch.stop()
            merger.close()
        }
        publisher.flush()
        if endingStreams { feed.finish() }
        try? pool.close()
        lock.withLock { $0 = nil }
        logger.info("left group", metadata: ["group": "\(directory.path)", "member": "\(member)"])
    }

    /// Closes the store (see the synchronous ``close()``) without blocking a
    /// thread of the Swift concurrency pool.
    public func close() async {
        await close(endingStreams: true)
    }

    func close(endingStreams: Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.close(endingStreams: endingStreams)
                continuation.resume()
            }
        }
    }

    deinit {
        close()
    }

    /// Whether this member's lock file is still the one in its folder.
    private func lockStillLinked() -> Bool {
        lock.withLock { $0?.isLinked(in: directory.members, member: member) ?? false }
    }

    /// A stream of saves: every save of other members after the last one a
    /// subscriber processed (at first, this member's durable cursor: the saves
    /// committed while it was down), then each new one, in sequence order.
    /// Subscribing before or after ``start()`` makes no difference; each
    /// subscriber gets every save.
    ///
    /// The member's durable cursor only moves past a save once every
    /// subscriber has processed it (asked for the next one), so saves in hand
    /// when the process dies come again. A slow subscriber holds at most a
    /// bounded number of saves in memory; beyond, it reads the history.
    /// The stream ends when the store closes, its task is cancelled, or its
    /// service is shut down gracefully (see ``SaveStream``).
    public func saves() -> SaveStream {
        feed.subscribe()
    }

    /// Why this store left the group, if the group directory or its database
    /// was removed or replaced while it ran (then writes throw it, and the
    /// ``saves()`` streams have finished).
    public var groupReplacedError: GroupStoreError? {
        detachment.withLock { $0 }
    }

    /// The last sequence number merged: delivered to the subscribers (or
    /// skipped as not for this member). Never waits.
    public var cursor: Int64 {
        merger.publicCursor.withLock { $0 }
    }

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
        if let detached = detachment.withLock({ $0 }) { throw detached }
    }

    /// The group directory or database was removed or replaced under this
    /// member: stop merging, end the save streams, refuse further writes
    /// (they would land in a file no other member sees). Runs on the merger's queue.
    func detach(_ reason: String) {
        let error = GroupStoreError(
            .groupReplaced, "\(reason) while member '\(member)' ran; reopen the store", path: directory.path)
        guard
            detachment.withLock({ current -> Bool in
                defer { if current == nil { current = error } }
                return current == nil
            })
        else { return }
        logger.info("left the group: \(error.message)")
        watch.stop()
        merger.close()
        notifier.close()
        feed.finish()
    }

    /// This member's folder was removed while it ran: make it again and take
    /// the lock in it again, so no other process can claim the name. A folder
    /// replaced by a symbolic link is not followed: payloads stop (peers read
    /// the history) until it is a directory again. Runs on the merger's queue.
    func repairOwnFolder() {
        // Several events may report one removal; repair once.
        if (try? directory.members.status(of: member.rawValue)) != nil, lockStillLinked() { return }
        do {
            let folder = try directory.memberFolder(member, create: true)
            let newLock = try MemberLock(member: member, folder: folder, group: directory.path)
            lock.withLock { $0 = newLock }
            publisher.replaceFolder(folder)
            merger.replaceFolder(folder)
            watch.watchOwnFolder()
            logger.info("this member's folder was removed; re-created it", metadata: ["path": "\(folder.path)"])
        } catch let error as GroupStoreError where error.code == .memberAlreadyLive {
            detach("another process took member name '\(member)' after its folder was removed")
        } catch {
            logger.info(
                "this member's folder was removed and cannot be re-created; payloads are not published, peers read the history",
                metadata: ["error": "\(error)"])
        }
    }

    private var closedError: GroupStoreError {
        GroupStoreError(.closed, "the store of member '\(member)' in \(directory.path) is closed", path: directory.path)
    }
}

/// Lets the merger's notification name the store without a retain cycle.
///
/// `@unchecked Sendable`: `store` is set once, in the store's initialiser,
/// before the merger can run, and only read afterwards.
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
