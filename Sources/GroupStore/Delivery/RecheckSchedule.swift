import Dispatch

/// When to look again after a `-wal` wake-up that found nothing.
///
/// The `-wal` file is written while a commit is being written, so a member
/// woken by it may read before the commit is visible (0.3–1 % of such
/// wake-ups, measured; a writer with `synchronous = FULL` publishes its
/// commit only after an fsync of the `-wal` file, which takes tens to
/// hundreds of milliseconds on a busy disk): it looks again shortly, then
/// after growing delays, and a slow safety tick covers the rest. Each stage is planned here and run by
/// the owner (``Delivery``), which reports back when it ran.
///
/// A recheck already pending covers a new one if it runs no later and is not
/// a last stage (so it looks again itself if it finds nothing). One that runs
/// later (the last stage of an earlier wake-up, such as a commit that changed
/// no tracked table), or a last stage, does not: the new one is added beside
/// it, so a commit seen early does not wait for the safety tick, and that
/// stage still runs (a read that finds an earlier commit says nothing of a
/// later one being written).
///
/// A value owned by ``Delivery`` and touched on its queue only.
struct RecheckSchedule {
    /// The delays of the stages after a wake-up, in seconds.
    static let delays: [Double] = [0.0001, 0.002, 0.02, 0.2]
    static let lastStage = delays.count - 1
    /// The stage to start at when the wake-up is explained by this process's
    /// own commit, already read (only a commit written at the same time by
    /// another process is left to catch).
    static let afterOwnCommit = 1

    private var pending: [(due: DispatchTime, stage: Int)] = []

    var isEmpty: Bool { pending.isEmpty }

    /// Plans stage `stage` from now; returns when it is due, or `nil` when a
    /// pending one covers it or there is no such stage.
    mutating func plan(stage: Int) -> DispatchTime? {
        guard stage < Self.delays.count else { return nil }
        let due = DispatchTime.now() + Self.delays[stage]
        if pending.contains(where: { $0.due <= due && $0.stage < Self.lastStage }) { return nil }
        pending.append((due, stage))
        return due
    }

    /// The stage planned for `due` ran.
    mutating func ran(due: DispatchTime, stage: Int) {
        if let index = pending.firstIndex(where: { $0.due == due && $0.stage == stage }) {
            pending.remove(at: index)
        }
    }
}
