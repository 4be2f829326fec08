import Dispatch
import Foundation
import GRDB
import Logging

/// Turns wake-ups into ordered deliveries.
///
/// On each wake-up it reads the closed transactions after its cursor from the
/// history and notifies this process's GRDB observers of the changed tables,
/// both in one deferred transaction (one snapshot, and SQLite's write lock is
/// never taken), then delivers the in-scope saves of other members in sequence
/// order, and advances the cursor, persisting it in batches. Payload files are
/// only wake-ups: what is delivered always comes from the history, so a lost,
/// garbage or hostile payload can delay a change but never lose or forge one.
///
/// `@unchecked Sendable`: every mutable property is touched on `queue` only
/// (the folder watcher's queue, so events and merges are serialised).
final class Merger: @unchecked Sendable {
    struct Settings: Sendable {
        var member: MemberName
        var inScopeEntityNames: Set<String>?
        var cursorFlushInterval: TimeInterval
        var batchSize = 512
    }

    let queue: DispatchQueue
    private let pool: DatabasePool
    private let settings: Settings
    private let directory: GroupDirectory
    private var folder: DirectoryHandle
    private let installer: TriggerInstaller
    private let broadcaster: SaveBroadcaster
    private let post: @Sendable (Save) -> Void
    private let logger: Logger

    // State confined to `queue`.
    private(set) var cursor: Int64
    /// The last change id of the cursor's transaction, once known.
    private var cursorLastChange: Int64?
    private var persistedCursor: Int64
    private var cursorFlushScheduled = false
    private var schemaVersion: Int?
    private var closed = false

    init(
        queue: DispatchQueue, pool: DatabasePool, settings: Settings, directory: GroupDirectory, folder: DirectoryHandle,
        installer: TriggerInstaller, broadcaster: SaveBroadcaster, cursor: Int64, logger: Logger,
        post: @escaping @Sendable (Save) -> Void
    ) {
        self.queue = queue
        self.pool = pool
        self.settings = settings
        self.directory = directory
        self.folder = folder
        self.installer = installer
        self.broadcaster = broadcaster
        self.cursor = cursor
        self.persistedCursor = cursor
        self.logger = logger
        self.post = post
    }

    /// Delivers everything committed after the cursor. Runs on `queue`.
    ///
    /// - Returns: whether anything new was found.
    /// - Parameter checkSchema: also look for tables created by writers
    ///   outside the library and install their triggers (done on the slow
    ///   safety tick, not on every wake-up).
    @discardableResult
    func merge(checkSchema: Bool = false) -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { return false }
        var foundAny = false
        var closedOpenTransaction = false
        for round in 0..<64 {
            let batch: HistoryBatch
            let version: Int?
            do {
                (batch, version) = try readAndNotify(checkSchema: checkSchema && round == 0)
            } catch {
                logger.info("cannot read the history; will retry", metadata: ["error": "\(error)"])
                return foundAny
            }
            if let version, version != schemaVersion {
                schemaVersion = version
                refreshTriggersIfNeeded()
            }
            if batch.prunedThrough > cursor {
                deliverResync(through: batch.prunedThrough)
                foundAny = true
                continue
            }
            if batch.saves.isEmpty {
                // A foreign writer's transaction is committed but still open:
                // close it (once per merge) and read again.
                if batch.hasOpenChanges && !closedOpenTransaction {
                    closedOpenTransaction = true
                    closeOpenTransaction()
                    continue
                }
                return foundAny
            }
            foundAny = true
            deliver(batch.saves)
            cursorLastChange = batch.lastChange
            if !batch.hasMore && !batch.hasOpenChanges { return true }
            if batch.hasOpenChanges && closedOpenTransaction { return true }
        }
        // Plenty left: yield the queue to pending events, then go on.
        queue.async { self.merge() }
        return foundAny
    }

    /// Reads the next batch and notifies this process's GRDB observers of the
    /// tables it changed, in one deferred transaction on the pool's writer
    /// connection: one snapshot, and no write lock is ever taken, so it never
    /// waits for another process's writer (only for this process's own).
    private func readAndNotify(checkSchema: Bool) throws -> (HistoryBatch, Int?) {
        try pool.writeWithoutTransaction { db in
            var result: (HistoryBatch, Int?)?
            try db.inTransaction(.deferred) {
                let batch = try HistoryReader.read(
                    db, after: cursor, cursorLastChange: cursorLastChange, limit: settings.batchSize)
                result = (batch, checkSchema ? try Self.schemaVersion(db) : nil)
                var tables = Set<String>()
                for save in batch.saves where save.author != settings.member.rawValue {
                    tables.formUnion(save.entityNames)
                }
                for table in tables {
                    do {
                        try db.notifyChanges(in: Table(table))
                    } catch {
                        // The table was dropped since: nothing observes it.
                    }
                }
                return .commit
            }
            return result!
        }
    }

    private func deliver(_ saves: [Save]) {
        var before = cursor
        for save in saves {
            defer { before = save.seq }
            guard save.author != settings.member.rawValue, let visible = save.restricted(to: settings.inScopeEntityNames) else {
                continue
            }
            broadcaster.deliver(visible, cursorBefore: before)
            post(visible)
        }
        cursor = saves[saves.count - 1].seq
        scheduleCursorFlush()
    }

    private func deliverResync(through seq: Int64) {
        logger.info(
            "cursor fell behind the pruned history; delivering a resync",
            metadata: ["cursor": "\(cursor)", "prunedThrough": "\(seq)"])
        let save = Save(kind: .resync, seq: seq, author: Save.externalAuthor, committedAt: Date(), changes: [])
        broadcaster.deliver(save, cursorBefore: cursor)
        post(save)
        cursor = seq
        cursorLastChange = nil
        scheduleCursorFlush()
    }

    private func closeOpenTransaction() {
        do {
            try pool.write { db in _ = try HistorySchema.closeOpenTransaction(db) }
        } catch {
            logger.info("cannot close a foreign transaction; will retry", metadata: ["error": "\(error)"])
        }
    }

    private func refreshTriggersIfNeeded() {
        do {
            let needed = try pool.read { db in !(try installer.plan(db).isEmpty) }
            guard needed else { return }
            let added = try pool.write { db in try installer.refresh(db, backfill: { _ in false }) }
            if !added.isEmpty {
                logger.info("now tracking new tables", metadata: ["tables": "\(added.joined(separator: ","))"])
            }
        } catch {
            logger.info("cannot refresh history triggers", metadata: ["error": "\(error)"])
        }
    }

    static func schemaVersion(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "PRAGMA schema_version")) ?? 0
    }

    // MARK: - Cursor

    private func scheduleCursorFlush() {
        guard !cursorFlushScheduled else { return }
        cursorFlushScheduled = true
        queue.asyncAfter(deadline: .now() + settings.cursorFlushInterval) {
            self.cursorFlushScheduled = false
            self.flushCursor()
        }
    }

    /// Writes the cursor file if it moved: as far as every subscriber has
    /// processed (see ``SaveStream``). Runs on `queue`.
    func flushCursor() {
        let safe = broadcaster.safeCursor(cursor)
        if safe < cursor && !closed { scheduleCursorFlush() }
        guard safe != persistedCursor else { return }
        do {
            try CursorFile.write(safe, member: settings.member, in: folder, staging: directory.staging)
            persistedCursor = safe
        } catch {
            logger.info("cannot persist the cursor", metadata: ["error": "\(error.message)"])
        }
    }

    /// Keeps the cursor in `folder` from now on, and writes it there now.
    /// Runs on `queue`.
    func replaceFolder(_ folder: DirectoryHandle) {
        self.folder = folder
        persistedCursor = -1
        flushCursor()
    }

    /// Stops merging and persists the cursor. Runs on `queue`.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        flushCursor()
        closed = true
    }
}
