import Dispatch
import Foundation
import GRDB
import Logging
import Synchronization

/// Turns wake-ups into ordered deliveries.
///
/// On each wake-up it reads the closed transactions after its cursor from the
/// history in one deferred transaction (one snapshot, and SQLite's write lock
/// is never taken), delivers the in-scope saves of other members in sequence
/// order, advances the cursor (persisting it in batches), then notifies this
/// process's GRDB observers of the tables other members changed. Payload files are
/// only wake-ups: what is delivered always comes from the history, so a lost,
/// garbage or hostile payload can delay a change but never lose or forge one.
///
/// `@unchecked Sendable`: every mutable property is touched on `queue` only
/// (the folder watcher's queue, so events and merges are serialised).
final class Merger: @unchecked Sendable {
    struct Settings: Sendable {
        var member: MemberName
        var inScopeEntityNames: EntityNameSet?
        var cursorFlushInterval: TimeInterval
        var writesOnly = false
        var batchSize = 512
        var synchronousDelivery: (@Sendable (Save) -> Void)?
    }

    /// Batches read in one go before yielding the queue to pending events.
    static let roundsPerWake = 64

    let queue: DispatchQueue
    private let pool: DatabasePool
    private let settings: Settings
    private let directory: GroupDirectory
    private var folder: DirectoryHandle
    private let tracker: SchemaTracker
    private let feed: SaveFeed
    private let notifier: SaveNotifier
    let metrics: GroupMetrics
    private let logger: Logger
    /// Told when each save passed each stage (the benchmark's breakdown).
    let tracer = Mutex<(@Sendable (DeliveryTrace) -> Void)?>(nil)

    // State confined to `queue`.
    private(set) var cursor: Int64 {
        didSet { publicCursor.withLock { $0 = cursor } }
    }
    /// `cursor`, readable from any thread without waiting for `queue`.
    let publicCursor: Mutex<Int64>
    /// Whether this member consumes saves (it is not ``GroupConfiguration/writesOnly``):
    /// only then is its cursor persisted, and so only then does it hold back pruning.
    let persistsCursor: Bool
    private var persistedCursor: Int64
    private var cursorFlushScheduled = false
    private var closed = false
    /// The group's identity, as this member knows it.
    private var epoch: String
    /// The member's cursor is not valid for this history (restored or
    /// replaced database, history reset): the first merge delivers a resync.
    private var resyncPending: Bool
    /// `committed_at` of delivered transactions not yet persisted, by seq:
    /// the fingerprint written with the cursor.
    private var fingerprints: [Int64: Double] = [:]
    /// Where this member started, or resynced to: a position between two
    /// transactions, like each merged save's.
    private var basePosition: Int64
    /// The cursor last written in this history (or the one it started
    /// from): everything up to it was processed, so the cursor kept never
    /// goes below it. -1 after a resync.
    private var durableFloor: Int64
    /// A resync handed over and not processed yet: until it is, the cursor
    /// on disk stays the one before it, so a restart delivers it again.
    private var unprocessedResync: Int64?
    private var names = TableNames()
    /// The first wake-up since the last delivery: what woke this member for
    /// the saves the next delivery hands over (for the trace).
    private var firstWake: (kind: DeliveryTrace.Wake, at: Double)?
    /// `PRAGMA data_version` of the pool's writer connection at the last read:
    /// it moves only when another connection (another process) commits.
    private var dataVersion: Int64?
    /// Tables other members changed whose GRDB observers are not notified
    /// yet, or every table (after a resync); kept until a notification
    /// succeeds.
    private var unnotified = Set<String>()
    private var unnotifiedEverything = false
    /// `PRAGMA schema_version` when GRDB's schema cache of the writer
    /// connection was last cleared.
    private var schemaVersionOfGRDBCache: Int64 = -1
    /// Transactions the last merge read.
    private(set) var lastMergeCount = 0
    /// The last merge was skipped: the `-wal` change was this process's own
    /// commit (see ``merge(wake:)``).
    private(set) var skippedOwnCommit = false
    /// The newest transaction this process committed through the library.
    private let ownNewest = Mutex<Int64>(0)

    /// Where a member starts.
    struct Start: Sendable {
        var cursor: CursorFile
        /// Deliver a resync first (the cursor does not belong to this history).
        var resync: Bool
        /// The cursor is the one on disk (else it is written when the member
        /// starts consuming).
        var onDisk: Bool
    }

    init(
        queue: DispatchQueue, pool: DatabasePool, settings: Settings, directory: GroupDirectory, folder: DirectoryHandle,
        tracker: SchemaTracker, feed: SaveFeed, notifier: SaveNotifier, start: Start, metrics: GroupMetrics, logger: Logger
    ) {
        self.queue = queue
        self.pool = pool
        self.settings = settings
        self.directory = directory
        self.folder = folder
        self.tracker = tracker
        self.feed = feed
        self.notifier = notifier
        self.metrics = metrics
        self.cursor = start.cursor.seq
        self.publicCursor = Mutex(start.cursor.seq)
        self.persistedCursor = start.resync || !start.onDisk ? -1 : start.cursor.seq
        self.persistsCursor = !settings.writesOnly
        self.epoch = start.cursor.epoch ?? ""
        self.resyncPending = start.resync
        if let fingerprint = start.cursor.fingerprint { fingerprints[start.cursor.seq] = fingerprint }
        basePosition = start.cursor.seq
        durableFloor = start.resync ? -1 : start.cursor.seq
        self.logger = logger
    }

    /// Delivers everything committed after the cursor. Runs on `queue`.
    ///
    /// - Parameter wake: what woke the member (for the metrics and the trace).
    /// - Returns: whether anything new was found.
    ///
    /// A `-wal` wake-up that this process's own commits explain (no other
    /// connection committed since the last read, and this process committed
    /// past the cursor) reads nothing: what it would find is mostly its own
    /// saves, which it does not deliver. The caller looks again 2 ms later
    /// (``skippedOwnCommit``), which also delivers what another writer left
    /// for this process's write to close (an outside writer's changes, sealed
    /// by this process's next write): those wait those 2 ms, nothing is lost.
    @discardableResult
    func merge(wake: DeliveryTrace.Wake = .timer) -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { return false }
        skippedOwnCommit = false
        lastMergeCount = 0
        if wake == .wal, ownNewest.withLock({ $0 }) > cursor, let dataVersion, currentDataVersion() == dataVersion {
            skippedOwnCommit = true
            metrics.wokeForOwnCommit()
            return false
        }
        let started = DispatchTime.now().uptimeNanoseconds
        let trace = tracer.withLock { $0 }
        let found = mergeRounds(wake: wake, trace: trace)
        // A wake-up that found nothing is kept as the first only if it came
        // from the -wal file: the commit that woke it may not be visible
        // yet, and a recheck finds it (see ``forgetWake()``).
        if !found, let first = firstWake, first.kind != .wal { firstWake = nil }
        metrics.merged(found: found, nanoseconds: Int64(DispatchTime.now().uptimeNanoseconds - started))
        return found
    }

    /// A wake-up is kept for the next delivery's trace. On `queue` (for tests).
    var hasPendingWake: Bool { firstWake != nil }

    /// The rechecks after a `-wal` wake-up found nothing either: that
    /// wake-up was not for a commit still to come. Runs on `queue`.
    func forgetWake() {
        firstWake = nil
    }

    /// This process committed transaction `seq` (any thread).
    func noteOwnCommit(_ seq: Int64) {
        ownNewest.withLock { $0 = max($0, seq) }
    }

    /// `PRAGMA data_version` of the pool's writer connection, or `nil` if it
    /// cannot be read (then the merge reads as usual).
    private func currentDataVersion() -> Int64? {
        try? pool.writeWithoutTransaction { db in try Self.dataVersion(db) }
    }

    private func mergeRounds(wake: DeliveryTrace.Wake, trace: (@Sendable (DeliveryTrace) -> Void)?) -> Bool {
        var foundAny = false
        var closedOpenTransaction = false
        var refreshed = false
        for round in 0..<Self.roundsPerWake {
            // After a delivery, a later round's saves were read because the
            // round before had more to read than one round takes.
            if trace != nil && firstWake == nil { firstWake = (round == 0 ? wake : .backlog, DeliveryTrace.now()) }
            let batch: HistoryBatch
            let group: GroupState
            let historyReadAt: Double
            let mergeStartedAt = trace != nil ? DeliveryTrace.now() : 0
            do {
                (batch, group, historyReadAt) = try read(traced: trace != nil)
                dataVersion = group.dataVersion
            } catch {
                logger.info("cannot read the history; will retry", metadata: ["error": "\(error)"])
                return foundAny
            }
            if resyncPending || group.epoch != epoch || group.head < cursor {
                // A restored or replaced database, or a history reset: this
                // member's cursor means nothing here.
                deliverResync(
                    through: group.head, epoch: group.epoch,
                    reason: resyncPending ? "the cursor does not belong to this database's history" : "the history went back")
                foundAny = true
                continue
            }
            if group.schemaChanged && !refreshed {
                // A writer outside the library changed the schema: track it
                // (new tables from their first row) before reading on.
                refreshed = true
                refreshSchema()
                continue
            }
            if batch.prunedThrough > cursor {
                deliverResync(through: batch.prunedThrough, epoch: epoch, reason: "the cursor fell behind the pruned history")
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
            lastMergeCount += batch.saves.count
            deliver(batch.saves, head: group.head)
            let handedOverAt = trace != nil ? DeliveryTrace.now() : 0
            for save in batch.saves where save.author != settings.member.rawValue {
                unnotified.formUnion(save.entityNames)
            }
            notifyObservers()
            if let trace, let wake = firstWake {
                let notifiedAt = DeliveryTrace.now()
                for save in batch.saves {
                    trace(
                        DeliveryTrace(
                            seq: save.seq, wake: wake.kind, wokeAt: wake.at, mergeStartedAt: mergeStartedAt,
                            historyReadAt: historyReadAt, handedOverAt: handedOverAt, observersNotifiedAt: notifiedAt))
                }
            }
            firstWake = nil
            if !batch.hasMore && !batch.hasOpenChanges { return true }
            if batch.hasOpenChanges && closedOpenTransaction { return true }
        }
        // Plenty left: yield the queue to pending events, then go on.
        queue.async { self.merge(wake: .backlog) }
        return foundAny
    }

    /// The group's state as read with a batch.
    struct GroupState {
        var head: Int64
        var epoch: String
        /// The schema changed since the library last tracked it, or its
        /// triggers are of an older format than this code's.
        var schemaChanged: Bool
        /// `PRAGMA data_version` of the connection that read it.
        var dataVersion: Int64?
    }

    /// Reads the next batch in one deferred transaction on the pool's writer
    /// connection: one snapshot, and no write lock is ever taken, so it never
    /// waits for another process's writer (only for this process's own).
    /// - Parameter traced: also say when the history was read, for the
    ///   trace; else that time is 0.
    private func read(traced: Bool) throws -> (HistoryBatch, GroupState, historyReadAt: Double) {
        try pool.writeWithoutTransaction { db in
            let (batch, group) = try Self.inDeferredTransaction(db) { () throws -> (HistoryBatch, GroupState) in
                // Everything the merge needs to know of the group, in one
                // statement and the two pragmas (read in its snapshot).
                let row = try RawRows(db, sql: Self.groupStateSQL)
                _ = try row.next()
                let schemaVersion = Int64(try HistorySchema.schemaVersion(db))
                let dataVersion = try Self.dataVersion(db)
                if schemaVersion != schemaVersionOfGRDBCache {
                    // GRDB clears a connection's schema cache after that
                    // connection's own schema changes only: after another
                    // process's (a table a peer created), the writer
                    // connection would not know the new table, so its
                    // observers would not be notified, and an observation
                    // registered there would drop it from its region. Cleared
                    // here, before the saves that announce it are handed over.
                    db.clearSchemaCache()
                    schemaVersionOfGRDBCache = schemaVersion
                }
                // A member of older code that tracked a schema change put its
                // own triggers back: put this code's back in turn.
                let olderTriggers = SchemaTracker.triggersAreOlder(recordedFormat: row.int64OrNil(6))
                let group = GroupState(
                    head: row.int64(0), epoch: row.text(1) ?? "",
                    schemaChanged: schemaVersion != (row.int64OrNil(2) ?? -1) || olderTriggers, dataVersion: dataVersion)
                let known = HistoryReader.Known(prunedThrough: row.int64(3), newestChange: row.int64(4), registryVersion: row.int64(5))
                let batch = try HistoryReader.read(db, after: cursor, limit: settings.batchSize, names: &names, known: known)
                return (batch, group)
            }
            return (batch, group, traced ? DeliveryTrace.now() : 0)
        }
    }

    /// Notifies this process's GRDB observers of the tables other members
    /// changed (``unnotified``), or of every table after a resync, from a
    /// deferred transaction on the pool's writer connection that reads and
    /// writes nothing (GRDB tells its observers when it commits). Runs after
    /// the hand-over: GRDB's notification costs about 10 µs a table (it looks
    /// the table's columns up), which the saves' subscribers need not wait
    /// for. A failure is logged, and the tables are notified with the next
    /// merge that delivers something.
    private func notifyObservers() {
        guard unnotifiedEverything || !unnotified.isEmpty else { return }
        do {
            try pool.writeWithoutTransaction { db in
                try Self.inDeferredTransaction(db) {
                    var tables = unnotified
                    if unnotifiedEverything {
                        // Table by table, not GRDB's whole-database region:
                        // that one fails as a whole on a table this process
                        // cannot open (a virtual table of a module it lacks).
                        tables.formUnion(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
                    }
                    for table in tables {
                        do {
                            try db.notifyChanges(in: Table(table))
                        } catch {
                            // Dropped since, or a table this process cannot
                            // open: nothing here observes it.
                        }
                    }
                }
            }
            unnotified.removeAll()
            unnotifiedEverything = false
        } catch {
            logger.info("cannot notify this process's GRDB observers; will retry", metadata: ["error": "\(error)"])
        }
    }

    /// Runs `body` in a deferred transaction on `db` (the pool's writer
    /// connection), committed when it returns and rolled back when it
    /// throws; its statements are cached.
    private static func inDeferredTransaction<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
        do {
            let value = try body()
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            return value
        } catch {
            try? db.rollback()
            throw error
        }
    }

    /// The pragmas are read apart, by cached statements: a table-valued
    /// `pragma_…` prepares a statement of its own each time it is read.
    private static let groupStateSQL = """
        SELECT (\(HistorySchema.lastSeqSQL)),
               (SELECT value FROM \(HistorySchema.metaTable) WHERE key = 'epoch'),
               (SELECT value FROM \(HistorySchema.metaTable) WHERE key = 'schema_version'),
               (SELECT value FROM \(HistorySchema.metaTable) WHERE key = 'pruned_through'),
               (SELECT max(id) FROM \(HistorySchema.changeTable)),
               (SELECT value FROM \(HistorySchema.metaTable) WHERE key = 'registry_version'),
               (SELECT value FROM \(HistorySchema.metaTable) WHERE key = 'trigger_format')
        """

    /// `PRAGMA data_version` of `db`'s connection.
    private static func dataVersion(_ db: Database) throws -> Int64? {
        let row = try RawRows(db, sql: "PRAGMA data_version")
        return try row.next() ? row.int64(0) : nil
    }

    /// Hands `saves` over, the metrics first (so they count a save before
    /// anyone sees it); `head` is the group's newest transaction.
    private func deliver(_ saves: [Save], head: Int64) {
        var deliverable: [Save] = []
        for save in saves {
            fingerprints[save.seq] = save.committedAt.timeIntervalSince1970
            if let visible = Self.deliverable(save, member: settings.member, scope: settings.inScopeEntityNames) {
                deliverable.append(visible)
            }
        }
        cursor = saves[saves.count - 1].seq
        metrics.read(saves.count, deliverable: deliverable.count, lag: max(0, head - cursor))
        if let handler = settings.synchronousDelivery {
            for save in deliverable { handler(save) }
        }
        feed.append(deliverable, merged: cursor)
        if settings.synchronousDelivery != nil, let last = deliverable.last { feed.markProcessed(last.seq) }
        notifier.post(deliverable)
        scheduleCursorFlush()
    }

    /// What of `save` this member is given: not its own saves, only the
    /// entities in scope, and nothing for a net-empty transaction (a row
    /// inserted and deleted again).
    static func deliverable(_ save: Save, member: MemberName, scope: EntityNameSet?) -> Save? {
        guard save.author != member.rawValue, let visible = save.restricted(to: scope) else { return nil }
        return visible.kind == .resync || !visible.changes.isEmpty ? visible : nil
    }

    private func deliverResync(through seq: Int64, epoch: String, reason: String) {
        logger.info(
            "delivering a resync: \(reason)",
            metadata: ["cursor": "\(cursor)", "resyncThrough": "\(seq)"])
        let save = Save(kind: .resync, seq: seq, author: Save.externalAuthor, committedAt: Date(), changes: [])
        cursor = seq
        settings.synchronousDelivery?(save)
        feed.resync(save)
        if settings.synchronousDelivery != nil { feed.markProcessed(seq) }
        notifier.post([save])
        // Anything may have changed: GRDB's observers refresh too.
        unnotifiedEverything = true
        notifyObservers()
        metrics.read(0, deliverable: 1, lag: 0)
        self.epoch = epoch
        resyncPending = false
        // Another history: its registry and this process's own commits in it
        // are not the ones known.
        names = TableNames()
        ownNewest.withLock { $0 = 0 }
        fingerprints = [:]
        basePosition = seq
        durableFloor = -1
        unprocessedResync = seq
        persistedCursor = -1
        scheduleCursorFlush()
    }

    private func closeOpenTransaction() {
        do {
            try pool.write { db in _ = try HistorySchema.closeOpenTransaction(db) }
        } catch {
            logger.info("cannot close a foreign transaction; will retry", metadata: ["error": "\(error)"])
        }
    }

    /// Tracks what a writer outside the library did to the schema, and closes
    /// that writer's transaction with what tracking recorded.
    private func refreshSchema() {
        do {
            let report = try pool.write { db -> SchemaTracker.Report in
                guard try SchemaTracker.needsRefreshOrTriggerUpgrade(db) else { return SchemaTracker.Report() }
                // What tracking records joins that writer's open changes: its
                // transaction changed the schema.
                let report = try tracker.refresh(db)
                try HistorySchema.closeOpenTransaction(db)
                return report
            }
            if !report.isEmpty {
                logger.info(
                    "schema changed outside the library",
                    metadata: ["tracking": "\(report.started.joined(separator: ","))", "reset": "\(report.reset.joined(separator: ","))"])
            }
        } catch {
            logger.info("cannot track schema changes; will retry", metadata: ["error": "\(error)"])
        }
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
        // A cursor found not to belong to this history is not replaced
        // before the resync it calls for is delivered and processed.
        guard persistsCursor, !resyncPending else { return }
        var safe = feed.safeCursor()
        if safe < cursor && !closed { scheduleCursorFlush() }
        if let resync = unprocessedResync {
            guard safe >= resync else { return }
            unprocessedResync = nil
        }
        // Sequence numbers are not consecutive: a position just before the
        // next save is kept as the transaction merged last before it (the
        // same position, none lies between; its fingerprint is known), or
        // where the member started or resynced to if none was merged since.
        if fingerprints[safe] == nil {
            var positions = fingerprints.keys.filter { $0 <= safe }
            if basePosition <= safe { positions.append(basePosition) }
            if let position = positions.max() { safe = position }
        }
        // A subscriber left behind the buffer's floor reports its own
        // position, which may be below what was written already.
        safe = max(safe, durableFloor)
        guard safe != persistedCursor else { return }
        do {
            try CursorFile(seq: safe, epoch: epoch, fingerprint: fingerprints[safe])
                .write(member: settings.member, in: folder, staging: directory.staging)
            persistedCursor = safe
            durableFloor = safe
            fingerprints = fingerprints.filter { $0.key >= safe }
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
