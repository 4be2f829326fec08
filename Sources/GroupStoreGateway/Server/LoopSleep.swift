#if Gateway
    import GroupStoreCloudPostgres
    import NIOCore

    /// Sleeps on the current task's event loop (`EventLoopExecutor.current`):
    /// a timer of the loop, removed when the sleeping task is cancelled.
    ///
    /// `Task.sleep` arms a timer of Swift's global executor, which wakes a
    /// thread of the global pool when it fires, even after the task was
    /// cancelled; a request's timers (its body's and its deadline's) are
    /// cancelled when it ends, so on a loop they cost no thread a wake-up.
    enum LoopSleep {
        /// Returns at `deadline`; throws when the task is cancelled first.
        static func until(_ deadline: ContinuousClock.Instant) async throws {
            guard let loop = EventLoopExecutor.current?.loop else {
                try await Task.sleep(until: deadline, clock: .continuous)
                return
            }
            let left = ContinuousClock.now.duration(to: deadline)
            let nanoseconds = left.components.seconds * 1_000_000_000 + left.components.attoseconds / 1_000_000_000
            let timer = loop.scheduleTask(in: .nanoseconds(max(0, nanoseconds))) {}
            try await withTaskCancellationHandler {
                try await timer.futureResult.get()
            } onCancel: {
                timer.cancel()
            }
        }
    }
#endif  // Gateway
