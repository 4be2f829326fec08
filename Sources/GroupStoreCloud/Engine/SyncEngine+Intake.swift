import Foundation
import GRDB
import GroupStore

extension SyncEngine {
    /// Waits until the history through `seq` is taken in (so the bridge's
    /// cursor never passes a save whose keys are not durably pending).
    func waitIntake(through seq: Int64) async {
        if intakePosition >= seq || waitersReleased { return }
        await withCheckedContinuation { continuation in
            // Looked at again here: the body was seen to run after an intake
            // that ran in between (the await let the engine's queue take the
            // next job first), and a waiter added after the intake that
            // covers it would wait for the next one: the bridge's timer,
            // seconds later.
            if intakePosition >= seq || waitersReleased {
                continuation.resume()
            } else {
                intakeWaiters.append((seq, continuation))
            }
        }
    }

    /// Lets every waiter go, and every later one at once (the bridge is
    /// stopping: a waiter that arrives after this call must not wait for
    /// an intake that will not come).
    func releaseWaiters() {
        waitersReleased = true
        for (_, continuation) in intakeWaiters { continuation.resume() }
        intakeWaiters = []
    }

    /// Records an intake committed in a transaction of the engine's (the
    /// history read through `outcome.through`).
    func noteIntake(_ outcome: HistoryIntake.Outcome) {
        if outcome.sawReset { needsRemap = true }
        if outcome.sawReset || outcome.pruned { diffsMayBePending = true }
        intakePosition = max(intakePosition, outcome.through)
        let ready = intakeWaiters.filter { $0.0 <= intakePosition }
        intakeWaiters.removeAll { $0.0 <= intakePosition }
        for (_, continuation) in ready { continuation.resume() }
    }

    /// Moves the changed keys of every transaction since the intake position
    /// into the pending keys, with the position, one page per transaction.
    /// The history is read outside the write (a page with nothing new
    /// writes nothing).
    func intake() async throws {
        // The engine is the only writer of the intake position: its copy is where the
        // stored one is, or ahead of it by the bridge's own transactions only.
        let intake = self.historyIntake
        while true {
            let position = intakePosition
            let page = try readDatabase { db in try store.historyIntake(db, after: position, limit: HistoryIntake.pageSize) }
            if page.prunedThrough > position {
                try writeDatabase { db in try intake.markPruned(through: page.prunedThrough, in: db) }
                noteIntake(HistoryIntake.Outcome(through: page.prunedThrough, pruned: true))
                continue
            }
            guard !page.saves.isEmpty else { return }
            let sawReset = try writeDatabase { db in try intake.takeIn(page, in: db) }
            noteIntake(HistoryIntake.Outcome(through: page.through, sawReset: sawReset))
            if !page.hasMore { return }
        }
    }
}
