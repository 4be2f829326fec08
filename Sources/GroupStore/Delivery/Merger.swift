import Foundation
import GRDB
import Logging

/// Reads what was committed after this member's cursor, and says what it
/// found as a ``MergeOutcome``; ``Delivery`` hands it over.
///
/// A read is one snapshot on the merger's own reader connection
/// (``HistoryConnection``, a WAL reader): it never waits for this member's
/// own writes, nor takes SQLite's write lock. The merger takes that lock only when the history needs
/// writing for everyone: a writer outside the library left changes that no
/// transaction closes (``closeOutsideChanges()``), or changed the schema
/// (``trackSchemaChange()``).
///
/// Payload files are only wake-ups: what is delivered always comes from the
/// history, so a lost, garbage or hostile payload can delay a change but never
/// lose or forge one. This member's own transactions are read (to move past
/// them) but not folded.
///
/// A value owned by ``Delivery`` and touched on its queue only.
struct Merger {
    struct Settings: Sendable {
        var member: MemberName
        var inScopeEntityNames: EntityNameSet?
        var batchSize = 512
    }

    /// Where a member starts.
    struct Start: Sendable {
        var cursor: CursorFile
        /// Deliver a resync first (the cursor does not belong to this history).
        var resync: Bool
        /// The cursor is the one on disk (else it is written when the member
        /// starts consuming).
        var onDisk: Bool
    }

    private let pool: DatabasePool
    private let connection: HistoryConnection
    let settings: Settings
    private let tracker: SchemaTracker
    private let logger: Logger

    /// The last transaction merged: read, and delivered or skipped as not
    /// for this member.
    private(set) var cursor: Int64
    /// The group's identity the cursor belongs to.
    private(set) var epoch: String
    /// The cursor does not belong to this history: the next read delivers a resync.
    private var resyncPending: Bool
    private var names = TableNames()

    init(pool: DatabasePool, connection: HistoryConnection, settings: Settings, tracker: SchemaTracker, start: Start, logger: Logger) {
        self.pool = pool
        self.connection = connection
        self.settings = settings
        self.tracker = tracker
        self.logger = logger
        cursor = start.cursor.seq
        epoch = start.cursor.epoch ?? ""
        resyncPending = start.resync
    }

    /// Reads the next batch after the cursor, and moves the cursor past it.
    /// - Parameter traced: also say when the read ended.
    /// - Parameter schemaTracked: the schema was tracked in this round of
    ///   reads already: read on even if it still looks changed.
    mutating func read(traced: Bool, schemaTracked: Bool = false) -> MergeOutcome {
        var outcome = MergeOutcome()
        let batch: HistoryBatch
        let group: GroupState
        do {
            (batch, group) = try connection.read { db in try readBatch(db) }
        } catch {
            logger.info("cannot read the history; will retry", metadata: ["error": "\(error)"])
            outcome.next = .failed
            return outcome
        }
        outcome.readAt = traced ? DeliveryTrace.now() : 0
        outcome.head = group.head
        outcome.schemaVersion = group.schemaVersion
        if resyncPending || group.epoch != epoch || group.head < cursor {
            // A restored or replaced database, or a history reset: this
            // member's cursor means nothing here.
            let reason = resyncPending ? "the cursor does not belong to this database's history" : "the history went back"
            outcome.resync = resync(through: group.head, epoch: group.epoch, reason: reason)
            outcome.next = .more
            return outcome
        }
        if group.schemaChanged && !schemaTracked {
            outcome.next = .trackSchema
            return outcome
        }
        if batch.prunedThrough > cursor {
            outcome.resync = resync(through: batch.prunedThrough, epoch: epoch, reason: "the cursor fell behind the pruned history")
            outcome.next = .more
            return outcome
        }
        outcome.transactions = batch.saves
        if let last = batch.saves.last { cursor = last.seq }
        outcome.deliverable = batch.saves.compactMap { $0.delivered(to: settings.member, scope: settings.inScopeEntityNames) }
        outcome.next = batch.hasMore ? .more : batch.hasOpenChanges ? .closeOutsideChanges : .done
        return outcome
    }

    /// Whether this process's commits may pass the cursor unread
    /// (``OwnCommits``): not while a resync is due (the cursor is of another history).
    var passesOwnCommits: Bool { !resyncPending }

    /// This process's commits through `seq` followed the cursor directly
    /// (``OwnCommits/pass(from:)``): the cursor moves past them unread.
    mutating func passedOwnCommits(through seq: Int64) {
        precondition(!resyncPending && seq > cursor, "own commits pass only a cursor of this history, forward")
        cursor = seq
    }

    private mutating func resync(through seq: Int64, epoch: String, reason: String) -> Save {
        logger.info("delivering a resync: \(reason)", metadata: ["cursor": "\(cursor)", "resyncThrough": "\(seq)"])
        cursor = seq
        self.epoch = epoch
        resyncPending = false
        // Another history: its registry is not the one known.
        names = TableNames()
        return Save(kind: .resync, seq: seq, author: Save.externalAuthor, committedAt: Date(), changes: [])
    }

    /// The group's state as read with a batch.
    private struct GroupState {
        var head: Int64
        var epoch: String
        var schemaVersion: Int64
        /// The schema changed since the library last tracked it, or its
        /// triggers are of an older format than this code's.
        var schemaChanged: Bool
    }

    /// Everything the merge needs to know of the group (one statement and a
    /// pragma), then the batch, in one snapshot.
    private mutating func readBatch(_ db: Database) throws -> (HistoryBatch, GroupState) {
        let row = try RawRows(db, sql: Self.groupStateSQL)
        _ = try row.next()
        let schemaVersion = Int64(try HistorySchema.schemaVersion(db))
        // A member of older code that tracked a schema change put its own
        // triggers back: put this code's back in turn.
        let olderTriggers = SchemaTracker.triggersAreOlder(recordedFormat: row.int64OrNil(6))
        let schemaChanged = schemaVersion != (row.int64OrNil(2) ?? -1)
        let group = GroupState(
            head: row.int64(0), epoch: row.text(1) ?? "", schemaVersion: schemaVersion, schemaChanged: schemaChanged || olderTriggers)
        let known = HistoryReader.Known(prunedThrough: row.int64(3), newestChange: row.int64(4), registryVersion: row.int64(5))
        let batch = try HistoryReader.read(
            db, after: cursor, limit: settings.batchSize, names: &names, known: known, skippingAuthor: settings.member.rawValue)
        return (batch, group)
    }

    /// The pragma is read apart, by a cached statement: a table-valued
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

    /// Closes the merger's connection (delivery stopped).
    func close() {
        connection.close()
    }

    // MARK: - Writes for the whole group

    /// Closes the changes a writer outside the library committed into a
    /// transaction of their own (under the write lock: another member may
    /// have closed them meanwhile, then this writes nothing).
    func closeOutsideChanges() {
        do {
            try pool.write { db in _ = try HistorySchema.closeOpenTransaction(db) }
        } catch {
            logger.info("cannot close a foreign transaction; will retry", metadata: ["error": "\(error)"])
        }
    }

    /// Tracks what a writer outside the library did to the schema, and closes
    /// that writer's transaction with what tracking recorded (a move of the
    /// schema version found here is never this transaction's own: see
    /// ``SchemaTracker/refresh(_:adopt:changedHere:)``).
    func trackSchemaChange() {
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
}
