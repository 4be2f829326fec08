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
        let lock = try MemberLock(member: member, folder: folder, group: directory.path)
        try directory.prepareDatabaseFile()

        let installer = TriggerInstaller(tracked: configuration.trackedTables)
        let (pool, cursor, sealed) = try directory.withSetupLock {
            let pool: DatabasePool
            do {
                pool = try DatabasePool(path: directory.databasePath, configuration: configuration.databaseConfiguration)
            } catch {
                throw GroupStoreError(.database, "cannot open database \(directory.databasePath): \(error)", path: directory.databasePath)
            }
            let (cursor, sealed) = try Self.prepareSchema(
                pool: pool, installer: installer, configuration: configuration, folder: folder, directory: directory)
            return (pool, cursor, sealed)
        }

        let broadcaster = SaveBroadcaster()
        let publisher = Publisher(pool: pool, member: member, directory: directory, folder: folder, logger: logger)
        let queue = DispatchQueue(label: "GroupStore.Merger.\(member)")
        let box = WeakStoreBox()
        let merger = Merger(
            queue: queue, pool: pool,
            settings: .init(
                member: member, inScopeEntityNames: configuration.inScopeEntityNames,
                cursorFlushInterval: configuration.cursorFlushInterval),
            directory: directory, folder: folder, installer: installer, broadcaster: broadcaster, cursor: cursor,
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
        box.store = self
        if let sealed { publisher.publish(sealed) }
        logger.info("joined group", metadata: ["group": "\(directory.path)", "member": "\(member)", "cursor": "\(cursor)"])
    }

    /// Opens the group off the Swift concurrency pool (the open blocks on I/O).
    public static func open(_ configuration: GroupConfiguration) async throws -> GroupStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try GroupStore(configuration) })
            }
        }
    }

    /// Creates the history, runs the migrations, installs triggers, and reads
    /// (or starts) this member's cursor.
    private static func prepareSchema(
        pool: DatabasePool, installer: TriggerInstaller, configuration: GroupConfiguration, folder: DirectoryHandle,
        directory: GroupDirectory
    ) throws -> (cursor: Int64, sealed: Int64?) {
        do {
            let tablesBefore = try pool.write { db -> Set<String> in
                try HistorySchema.create(db)
                return Set(try TrackedTable.all(in: db).map(\.name))
            }
            try configuration.migrator?.migrate(pool)
            let (sealed, lastClosed) = try pool.write { db -> (Int64?, Int64) in
                try HistorySchema.closeOpenTransaction(db)
                // Rows that migrations inserted into tables they created are
                // published; pre-existing tables are adopted without replay.
                try installer.refresh(db, backfill: { !tablesBefore.contains($0) })
                let sealed = try HistorySchema.seal(db, author: configuration.member, committedAt: Date())
                return (sealed, try HistorySchema.lastSeq(db))
            }
            if let cursor = CursorFile.read(in: folder) { return (cursor, sealed) }
            // A new member starts at the present (its own migration included).
            do {
                try CursorFile.write(lastClosed, member: configuration.member, in: folder, staging: directory.staging)
            } catch {
                // A full or read-only disk: the cursor is written again with
                // the next delivery; until then this member pins nothing.
                configuration.logger.info("cannot write the cursor yet", metadata: ["error": "\(error.message)"])
            }
            return (lastClosed, sealed)
        } catch let error as GroupStoreError {
            throw error
        } catch {
            throw GroupStoreError(
                .database, "cannot prepare database \(directory.databasePath): \(error)", path: directory.databasePath)
        }
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
