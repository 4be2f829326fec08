import Foundation
import GRDB
import GroupStore
import Logging

extension SyncEngine {
    /// Takes saves delivered to the bridge's member in (see ``SaveIntake``),
    /// in one transaction, and returns once their keys are durably pending:
    /// the bridge's loop of saves asks for the next ones only then, so the
    /// member's durable cursor never passes a save whose keys are not pending.
    ///
    /// A write that fails (the database busy past its timeout, a full disk)
    /// is tried again after a growing wait, for as long as the bridge runs.
    /// - Returns: `false` if the bridge stopped before the save was taken in
    ///   (it is then not processed, and comes again at the next start).
    func takeIn(delivered saves: [Save]) async -> Bool {
        var failures = 0
        while true {
            do {
                try takeIn(saves)
                return true
            } catch {
                failures += 1
                logger.info(
                    "cannot take a local save in; will retry", metadata: ["through": "\(saves.last?.seq ?? 0)", "error": "\(error)"])
                let delay = Retry.delay(afterFailure: failures, configuration)
                do { try await Task.sleep(nanoseconds: UInt64(delay * 1e9)) } catch { return false }
            }
        }
    }

    /// Through here the history is taken in, or the bridge's own: changes of
    /// others not taken in yet follow it (see ``EngineState/checkedPosition``).
    var historyTakenIn: Int64 { max(store.processedThrough, state.checkedPosition) }

    /// Takes `saves` in, in one transaction of the bridge's bookkeeping, and
    /// notes why the next sync has work. While no sync runs, the same
    /// transaction prepares the first upload batch the keys call for
    /// (``EngineState/prepared``): the sync it wakes sends it as is, so a
    /// synced change costs the uploading bridge two local write
    /// transactions, this one and the acknowledgement.
    func takeIn(_ saves: [Save]) throws {
        let (intake, position) = (self.intake, state.intakePosition)
        // Saves taken in before (delivered again after a restart) write nothing.
        guard saves.contains(where: { $0.kind == .resync || $0.seq > position }) else { return }
        let tables = state.syncing || state.prepared != nil ? [] : self.tables
        let preparation = self.preparation(takenIn: max(store.processedThrough, position))
        let (outcome, prepared) = try writeDatabase { db -> (SaveIntake.Outcome, (String, Batch)?) in
            let outcome = try intake.takeIn(saves, after: position, in: db)
            guard outcome.work.keys > 0, outcome.work.tables == 0 else { return (outcome, nil) }
            var preparation = preparation
            preparation.takenIn = max(preparation.takenIn, outcome.position)
            // Parents first, as the upload goes; a table whose keys all settled is passed.
            for table in tables {
                let batch = try Self.prepare(table, preparation, in: db)
                if !batch.uploads.isEmpty { return (outcome, (table.name, batch)) }
                if batch.more { break }
            }
            return (outcome, nil)
        }
        state.intakePosition = outcome.position
        state.prepared = prepared.map { (table: $0.0, batch: $0.1) }
        state.record(.gave(outcome.work))
        if outcome.sawReset { state.tablesChanged = true }
    }
}
