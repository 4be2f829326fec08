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
    private let broadcaster: SaveBroadcaster
    private let pruner: Pruner
    private let lock: Mutex<MemberLock?>
    private let phase = Mutex(Phase.opened)
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

        let broadcaster = SaveBroadcaster()
        let publisher = Publisher(pool: pool, member: member, directory: directory, folder: folder, logger: logger)
        let queue = DispatchQueue(label: "GroupStore.Merger.\(member)")
        let box = WeakStoreBox()
        let merger = Merger(
            queue: queue, pool: pool,
            settings: .init(
                member: member, inScopeEntityNames: configuration.inScopeEntityNames.map(EntityNameSet.init),
                cursorFlushInterval: configuration.cursorFlushInterval),
            directory: directory, folder: folder, tracker: tracker, broadcaster: broadcaster, start: start,
            logger: logger,
            post: { save in
                NotificationCenter.default.post(
                    name: .groupStoreDidSave, object: box.store, userInfo: [GroupStore.saveUserInfoKey: save])
            })

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
        self.broadcaster = broadcaster
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
    /// history, else a resync; a new member starts at the present, written
    /// down before the member is reported live.
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
            let start = CursorFile(seq: head, epoch: epoch, fingerprint: fingerprint)
            do {
                try start.write(member: member, in: folder, staging: directory.staging)
            } catch {
                // A full or read-only disk: the cursor is written again with
                // the next delivery.
                logger.info("cannot write the cursor yet", metadata: ["error": "\(error.message)"])
            }
            return Merger.Start(cursor: start, resync: false)
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
            cursor: CursorFile(seq: file.seq, epoch: epoch, fingerprint: file.fingerprint), resync: problem != nil)
    }

    /// Starts watching the group and delivering saves (first those committed
    /// while this member was down). Subscribe with ``saves()`` before. Idempotent.
    public func start() throws {
        let proceed = try phase.withLock { phase throws(GroupStoreError) -> Bool in
            switch phase {
            case .opened:
                phase = .started
                return true
            case .started: return false
            case .closed: throw closedError
            }
        }
        guard proceed else { return }
        do {
            try watch.start()
        } catch {
            throw GroupStoreError(.fileSystem, "cannot watch group \(directory.path): \(error)", path: directory.path, errno: error.errno)
        }
        if let interval = configuration.pruneInterval {
            let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
            let pruner = self.pruner
            let logger = self.logger
            timer.setEventHandler {
                do { _ = try pruner.prune() } catch { logger.info("pruning failed", metadata: ["error": "\(error)"]) }
            }
            timer.activate()
            pruneTimer.withLock { $0 = TimerBox(timer: timer) }
        }
    }

    /// Stops watching, persists the cursor, finishes every ``saves()`` stream,
    /// closes the database and releases the member name. Idempotent.
    public func close() {
        let wasOpen = phase.withLock { phase -> Bool in
            defer { phase = .closed }
            return phase != .closed
        }
        guard wasOpen else { return }
        pruneTimer.withLock { $0?.timer.cancel() }
        merger.queue.sync {
            watch.stop()
            merger.close()
        }
        publisher.flush()
        broadcaster.finish()
        try? pool.close()
        lock.withLock { $0 = nil }
        logger.info("left group", metadata: ["group": "\(directory.path)", "member": "\(member)"])
    }

    deinit {
        close()
    }

    /// Whether this member's lock file is still the one in its folder.
    private func lockStillLinked() -> Bool {
        lock.withLock { $0?.isLinked(in: directory.members, member: member) ?? false }
    }

    /// A stream of the saves delivered from now on (every subscriber gets
    /// each). It finishes when the store closes. The member's durable cursor
    /// only moves past a save once every subscriber has processed it (asked
    /// for the next one), so saves in hand when the process dies come again.
    public func saves() -> SaveStream {
        broadcaster.subscribe()
    }

    /// Why this store left the group, if the group directory or its database
    /// was removed or replaced while it ran (then writes throw it, and the
    /// ``saves()`` streams have finished).
    public var groupReplacedError: GroupStoreError? {
        detachment.withLock { $0 }
    }

    /// The last sequence number delivered (or skipped as out of scope).
    public var cursor: Int64 {
        merger.queue.sync { merger.cursor }
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
        broadcaster.finish()
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
