import Dispatch

/// The serial executor of one ``SyncEngine``: a dispatch queue of its own.
///
/// The engine's database work is many short SQLite transactions per sync.
/// Through GRDB's async API each one is two thread hand-offs (to the
/// database's queue and back), and on a small host a hand-off to an idle
/// thread costs as much as the transaction. On this queue the engine calls
/// GRDB's synchronous API instead: the work runs on the engine's own thread
/// (a serial dispatch queue runs a `sync` block on the caller's thread), and
/// it blocks this queue only, never the Swift concurrency pool.
///
/// It is also the task executor of the bridge's loops (local saves, push
/// hints, the timer, the syncs themselves): a hand-off between them and the
/// engine is then a job on this same queue, not a thread woken.
///
/// `@unchecked Sendable`: its only state is an immutable dispatch queue,
/// which is itself safe to use from any thread.
final class EngineQueue: SerialExecutor, TaskExecutor, @unchecked Sendable {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
