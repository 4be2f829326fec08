import Dispatch
import Foundation
import GRDB
import Logging
import Synchronization

extension GroupStore {
    /// Runs `updates` in one write transaction, records it in the history
    /// under this member's name and publishes it to the group.
    ///
    /// Tables created inside the transaction start being tracked at once and
    /// their rows are published as inserted; tables dropped, renamed or
    /// altered are published as reset (see ``EntityChange/reset``). The
    /// transaction runs off the Swift concurrency pool.
    ///
    /// - Returns: what `updates` returns, Sendable or not (a `Row`, an array
    ///   of records): it is handed over, not shared.
    @discardableResult
    public func write<T>(_ updates: @Sendable (Database) throws -> sending T) async throws -> sending T {
        try await writeWithSequence(updates).value
    }

    /// ``write(_:)`` on the calling thread, which it blocks until the
    /// transaction commits: for code that is not async (a thread of its own,
    /// a synchronous delivery handler). Never call it from a task.
    @discardableResult
    public func writeBlocking<T>(_ updates: (Database) throws -> T) throws -> T {
        try checkOpen()
        let (value, payload) = try pool.writeWithoutTransaction { db in try recordedWrite(db, updates) }
        if let payload { committed(payload) }
        return value
    }

    /// Every library write: `updates` in one `IMMEDIATE` write transaction
    /// (as GRDB's `write`), recorded; then, with the connection still held,
    /// the history's state it left is kept for the next write if this
    /// commit was the connection's last change (see ``KnownHistoryState``).
    fileprivate func recordedWrite<T>(_ db: Database, _ updates: (Database) throws -> T) throws -> (T, Payload?) {
        var result: (value: T, payload: Payload?, state: HistorySchema.State, version: UInt32?, changes: Int64)?
        do {
            try db.inTransaction(.immediate) {
                result = try recordedTransaction(db, updates)
                return .commit
            }
        } catch {
            knownState.withLock { $0.forget() }
            throw error
        }
        let (value, payload, state, version, changes) = result!
        // The commit moved the data version by one, and nothing changed a row
        // since the seal (an observer of the commit could have).
        if let version, KnownHistoryState.dataVersion(db) == version &+ 1, KnownHistoryState.totalChanges(db) == changes {
            knownState.withLock { $0.keep(state, at: version &+ 1) }
        } else {
            knownState.withLock { $0.forget() }
        }
        return (value, payload)
    }

    /// The body of every library write, inside the write transaction: the
    /// history's state before `updates` (kept from this process's previous
    /// write while the database has not changed since, else one statement),
    /// the schema version after them, and the seal, which builds the payload
    /// from the rows just recorded.
    /// - Returns: also the history's state the write leaves, the data version
    ///   and the connection's changed rows at its end.
    private func recordedTransaction<T>(
        _ db: Database, _ updates: (Database) throws -> T
    ) throws -> (T, Payload?, HistorySchema.State, UInt32?, Int64) {
        let startVersion = KnownHistoryState.dataVersion(db)
        let changesAtStart = KnownHistoryState.totalChanges(db)
        openFold.withLock { $0 = nil }
        var before = try knownState.withLock { $0.state(at: startVersion) } ?? HistorySchema.state(db)
        // A schema change made outside the library is tracked first, and with
        // the changes that writer committed it is a transaction of its own.
        if !before.schemaIsTracked {
            try tracker.refresh(db)
            before = try HistorySchema.state(db)
        }
        if before.unsealedChanges {
            before.sealedChange = try HistorySchema.insertMarker(db, author: nil, committedAt: Date())
            before.newestChange = before.sealedChange
        }
        let value = try updates(db)
        var after = try HistorySchema.state(db, after: before)
        if after.schemaVersion != before.schemaVersion {
            // Schema changes are tracked in the same transaction: tables
            // created here from their first row, renames, drops, new columns.
            try tracker.refresh(db, changedHere: true)
            after = try HistorySchema.state(db)
        } else {
            #if DEBUG
                // Debug builds compare what the seal uses of the derived
                // state with a full read, and say so when they differ (the
                // write's own statements may have changed the history's
                // tables; the state read is then used).
                let read = try HistorySchema.state(db)
                if (read.sealedChange, read.registryVersion, read.schemaIsTracked) != (
                    after.sealedChange, after.registryVersion, after.schemaIsTracked
                ) {
                    logger.info(
                        "a write's derived history state differs from the state read; using the state read",
                        metadata: ["derived": "\(after)", "read": "\(read)"])
                    after = read
                }
            #endif
        }
        let folded = openFold.withLock { fold in
            defer { fold = nil }
            return fold
        }
        let payload = try tableNames.withLock { names in
            // The rows the connection changed hint at the rows recorded.
            try Payload.seal(
                db, state: after, author: member, names: &names,
                expectedRows: Int(clamping: KnownHistoryState.totalChanges(db) - changesAtStart), folded: folded)
        }
        // What the next write finds if nothing else commits: this one's
        // marker is the newest row.
        after.sealedChange = payload?.seq ?? after.sealedChange
        after.newestChange = after.sealedChange
        return (value, payload, after, KnownHistoryState.dataVersion(db), KnownHistoryState.totalChanges(db))
    }

    /// After a library write committed: the delivery learns it (so this
    /// member's cursor moves past it without reading it back), and the
    /// payload is published.
    func committed(_ payload: Payload) {
        delivery.ownCommit(payload)
        // A transaction no member will be given wakes none.
        if payload.delivers { publisher.publish(payload) }
    }

    /// Waits until every payload of this process's writes so far is
    /// published (for short-lived tools that exit right after writing),
    /// without blocking a thread of the concurrency pool.
    public func flushPublications() async {
        await offThePool { self.publisher.flush() }
    }

    /// ``flushPublications()``, blocking the calling thread (not from a task).
    public func flushPublicationsBlocking() {
        publisher.flush()
    }
}

extension GroupStore {
    /// Like ``write(_:)``, also returning the transaction's sequence number:
    /// `nil` when no member will be given it (no tracked row changed for
    /// good: nothing was written, or a row was inserted and deleted again).
    public func writeWithSequence<T>(
        _ updates: @Sendable (Database) throws -> sending T
    ) async throws -> sending (value: T, seq: Int64?) {
        try checkOpen()
        let written = try await pool.writeWithoutTransaction { db in Handover(try self.recordedWrite(db, updates)) }
        let (value, payload) = written.value
        if let payload { committed(payload) }
        return (value, payload.flatMap { $0.delivers ? $0.seq : nil })
    }
}

/// Carries a write's value from GRDB's writer queue to the task that awaits it.
///
/// `@unchecked Sendable`: the value comes from a closure whose result is
/// `sending` (no other reference to it is left), is put in the box once,
/// and read once by the one task the box is handed to.
private struct Handover<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
