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
    /// notes why the next sync has work.
    func takeIn(_ saves: [Save]) throws {
        let (intake, position) = (self.intake, state.intakePosition)
        // Saves taken in before (delivered again after a restart) write nothing.
        guard saves.contains(where: { $0.kind == .resync || $0.seq > position }) else { return }
        let outcome = try writeDatabase { db in try intake.takeIn(saves, after: position, in: db) }
        state.intakePosition = outcome.position
        if outcome.markedKeys { state.reasons.insert(.savesTakenIn) }
        if outcome.markedForDiff { state.reasons.insert(.tablesToDiff) }
        if outcome.sawReset { state.tablesChanged = true }
    }
}
