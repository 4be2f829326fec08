import Foundation
import GRDB
import GroupStore
import Logging

/// The bridge's one way in for local changes: the ``Save``s its member is
/// delivered (``GroupStore/saves()``) become pending keys.
///
/// A save carries what intake needs — its sequence number, author, commit
/// time and, per table, the inserted, updated and deleted keys and `reset` —
/// as the store's merger read them from the history: nothing is read again.
/// Every key a save changed in a synced table becomes pending with the
/// save's commit time as its edit time, and the intake position moves to
/// the save, in one transaction of the caller's. A `reset` marks its table
/// to be compared in full (its keys were not listed), a resync every table.
///
/// A one-shot sync, whose store delivers nothing, takes the history in
/// through the same function: ``HistoryBacklog`` reads it as saves.
struct SaveIntake: Sendable {
    /// The bridge's member name: its own transactions (applied remote
    /// changes) are not taken in.
    let member: String
    let applier: RecordApplier
    let tables: [MappedTable]
    let logger: Logger
    /// Added to commit times: a skewed host clock, in tests (``CloudSyncConfiguration/clockSkew``).
    var clockSkew: TimeInterval = 0

    /// What taking saves in found.
    struct Outcome: Sendable {
        /// The intake position after them.
        var position: Int64
        /// Keys made pending, tables marked for a diff (a reset, or a resync).
        var work = UploadWork()
        /// A synced table's schema changed (it was marked for a diff).
        var sawReset = false
    }

    /// Takes `saves` (in sequence order) in after `position`, in the
    /// caller's write transaction; a save at or before `position` was taken
    /// in before (delivered again after a restart) and is skipped, but for a
    /// resync, which renumbers.
    func takeIn(_ saves: [Save], after position: Int64, in db: Database) throws -> Outcome {
        var outcome = Outcome(position: position)
        for save in saves {
            if save.kind == .resync {
                logger.info("the history was replaced or pruned past the bridge: diffing", metadata: ["through": "\(save.seq)"])
                for table in tables { try outcome.work.markForDiff(db, entity: table.name) }
                outcome.position = save.seq
                continue
            }
            guard save.seq > outcome.position else { continue }
            outcome.position = save.seq
            guard save.author != member else { continue }
            for change in save.changes {
                guard let table = applier.table(named: change.entity) else { continue }
                if change.reset {
                    try outcome.work.markForDiff(db, entity: table.name)
                    outcome.sawReset = true
                }
                for key in change.inserted + change.updated + change.deleted {
                    guard let name = RecordName.name(of: key, shape: table.key) else {
                        logger.info(
                            "row not synced: its key cannot name a record (NULL, an integer or a real in a key column that does not enforce its type)",
                            metadata: ["table": "\(table.name)", "key": "\(key.json)"])
                        continue
                    }
                    try outcome.work.markPending(
                        db, entity: table.name, name: name, editedAt: save.committedAt.addingTimeInterval(clockSkew))
                }
            }
        }
        if outcome.position != position { try SyncState.setIntakePosition(db, outcome.position) }
        return outcome
    }
}
