import Foundation
import GRDB
import GroupStore
import Logging

/// Takes the group's history in as pending keys, inside a transaction of
/// the caller's: every key a transaction of another author changed in a
/// synced table becomes pending, and the intake position moves on with
/// them in the same transaction.
struct HistoryIntake: Sendable {
    /// The bridge's member name: its own transactions (applied remote
    /// changes) are not taken in.
    let member: String
    /// The store whose history is taken in.
    let store: GroupStore
    let applier: RecordApplier
    let tables: [MappedTable]
    let logger: Logger

    /// Transactions read per page.
    static let pageSize = 512

    /// What one intake found.
    struct Outcome: Sendable {
        /// The position after it (the last transaction read, or where the history was pruned).
        var through: Int64
        /// A synced table's schema changed (it was marked for a diff).
        var sawReset = false
        /// The history was pruned past the position: every table was marked for a diff.
        var pruned = false
    }

    /// Takes in every transaction after `position`, page by page, in the
    /// caller's write transaction: nothing can commit meanwhile, so the
    /// pending keys are complete when the caller goes on (an applied remote
    /// change then meets every local edit as a conflict).
    ///
    /// With `persistOwn` false, a page of the bridge's own transactions only
    /// does not move the stored position (a transaction that writes nothing
    /// else then writes nothing, and wakes no member); the caller stores it
    /// with its next write, or it is read again.
    func takeInAll(after position: Int64, persistOwn: Bool = true, in db: Database) throws -> Outcome {
        var outcome = Outcome(through: position)
        while true {
            let page = try store.historyIntake(db, after: outcome.through, limit: Self.pageSize)
            if page.prunedThrough > outcome.through {
                try markPruned(through: page.prunedThrough, in: db)
                outcome.through = page.prunedThrough
                outcome.pruned = true
                continue
            }
            guard !page.saves.isEmpty else { return outcome }
            if try takeIn(page, persistOwn: persistOwn, in: db) { outcome.sawReset = true }
            outcome.through = page.through
            if !page.hasMore { return outcome }
        }
    }

    /// The history was pruned past the intake position: what changed there
    /// is found by diffing every table.
    func markPruned(through: Int64, in db: Database) throws {
        logger.info("history pruned past the bridge: diffing", metadata: ["through": "\(through)"])
        for table in tables { try SyncState.markForDiff(db, entity: table.name) }
        try SyncState.setValue(db, "intake_seq", through)
    }

    /// Marks the keys of one page pending and moves the position to its
    /// end (for a page of the bridge's own transactions only, if
    /// `persistOwn`); returns whether a synced table's schema changed.
    func takeIn(_ page: HistoryIntakePage, persistOwn: Bool = true, in db: Database) throws -> Bool {
        var resets = false
        var foreign = false
        for save in page.saves where save.author != member {
            foreign = true
            for change in save.changes {
                guard let table = applier.table(named: change.entity) else { continue }
                if change.reset {
                    try SyncState.markForDiff(db, entity: table.name)
                    resets = true
                }
                for key in change.inserted + change.updated + change.deleted {
                    guard let name = RecordName.name(of: key, shape: table.key) else {
                        logger.info(
                            "row not synced: its key cannot name a record (NULL, empty, not text, or starting with hex:)",
                            metadata: ["table": "\(table.name)", "key": "\(key.json)"])
                        continue
                    }
                    try SyncState.addPending(db, entity: table.name, name: name, editedAt: save.committedAt)
                }
            }
        }
        if foreign || persistOwn { try SyncState.setValue(db, "intake_seq", page.through) }
        return resets
    }
}
