#if Postgres
    import NIOCore
    import Synchronization

    /// An event loop as the executor of tasks that talk to connections of
    /// that loop.
    ///
    /// On Swift's global pool, such a task hops between threads at every
    /// step: each answer arrives on the connection's event loop and resumes
    /// the task on the pool, and each statement it sends is written on the
    /// loop. Each hop wakes a thread, and on a host of two cores shared with
    /// the database and the clients those wake-ups cost more than the work
    /// itself. Here the task runs on the loop's thread, where the answers of
    /// the loop's connections come directly.
    ///
    /// Work on an event loop must not block (no file or socket I/O of its
    /// own, only short locks). Who runs tasks here: a gateway's requests
    /// (on their HTTP connection's loop, with that loop's pool of database
    /// connections: `PostgresRemote.init(url:maximumConnections:poolPerEventLoop:logger:)`),
    /// and the push listener and those that follow its notices (``PostgresRemote/noticeExecutor``).
    ///
    /// There is one executor a loop (``of(_:)``), made once and kept for the
    /// process's life: a task may run on it long after what started it ended
    /// (a request's timer, after its connection closed), and none is ever gone.
    package final class EventLoopExecutor: TaskExecutor {
        package let loop: any EventLoop

        private init(_ loop: any EventLoop) { self.loop = loop }

        /// Every loop's executor made so far (as many as the process has loops).
        private static let made = Mutex<[ObjectIdentifier: EventLoopExecutor]>([:])

        /// The executor of `loop`.
        package static func of(_ loop: any EventLoop) -> EventLoopExecutor {
            made.withLock { made in
                if let executor = made[ObjectIdentifier(loop)] { return executor }
                let executor = EventLoopExecutor(loop)
                made[ObjectIdentifier(loop)] = executor
                return executor
            }
        }

        package func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }

        /// The executor of the connection the current task serves, for the
        /// unstructured tasks it starts: a task-local is inherited by them,
        /// an executor preference is not.
        @TaskLocal package static var current: EventLoopExecutor?

        /// Runs `body`, and the tasks it starts, on `loop`.
        package static func run(on loop: any EventLoop, _ body: () async -> Void) async {
            let executor = of(loop)
            await $current.withValue(executor) {
                await withTaskExecutorPreference(executor) { await body() }
            }
        }
    }
#endif  // Postgres
