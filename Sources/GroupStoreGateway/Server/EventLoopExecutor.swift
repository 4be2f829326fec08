#if Gateway
    import NIOCore

    /// A connection's event loop as the executor of the tasks that serve it
    /// (``GuardedChannel``).
    ///
    /// On Swift's global pool, a request hops between threads at every step:
    /// its bytes arrive on the connection's event loop, its handler runs on
    /// the pool, each answer of the database arrives on a pooled connection's
    /// event loop and resumes the handler on the pool again, and its answer
    /// is written on the event loop. Each hop wakes a thread, and on a host
    /// of two cores shared with the database and the clients those wake-ups
    /// cost more than the gateway's own work. Here a request runs on its
    /// connection's thread, where the database's answers (the same group of
    /// event loops) come directly when their connection shares it.
    ///
    /// The gateway's handlers never block (no file or socket I/O of their own,
    /// only short locks), as work on an event loop must not; work that grows
    /// with a request goes to the global pool: the request of a body past
    /// ``BodyLimitMiddleware/largeBody`` and the pages of a push connection's
    /// prefetches, encoded whole (``PushHub``); their database calls still
    /// run on the loop (``Deadline``). An answer to a request is encoded on the
    /// loop (a page is as large as the limit its client asked for).
    final class EventLoopExecutor: TaskExecutor {
        let loop: any EventLoop

        init(_ loop: any EventLoop) { self.loop = loop }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }

        /// The executor of the connection the current task serves, for the
        /// unstructured tasks it starts (``Deadline``): a task-local is
        /// inherited by them, an executor preference is not.
        @TaskLocal static var current: EventLoopExecutor?

        /// Runs `body`, and the tasks it starts, on `loop`.
        static func run(on loop: any EventLoop, _ body: () async -> Void) async {
            let executor = EventLoopExecutor(loop)
            await $current.withValue(executor) {
                await withTaskExecutorPreference(executor) { await body() }
            }
        }
    }
#endif  // Gateway
