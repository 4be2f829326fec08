#if Gateway
    import GroupStoreCloud
    import Synchronization

    /// Runs an operation with a deadline: past it, the caller gets a transient
    /// error at once (the client tries again), while the operation, which may
    /// not stop before its statement is answered, is cancelled and ends on its own.
    enum Deadline {
        static func run<T: Sendable>(
            seconds: Double, _ what: String, _ operation: @escaping @Sendable () async throws -> T
        ) async throws -> T {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let settlement = Settlement(continuation)
                let work = Task {
                    do {
                        settlement.resume(with: .success(try await operation()))
                    } catch {
                        settlement.resume(with: .failure(error))
                    }
                }
                settlement.start(
                    timer: Task {
                        do { try await Task.sleep(for: .seconds(seconds)) } catch { return }
                        let timeout = CloudSyncError(.transient, "the gateway gave up on \(what) after \(Int(seconds)) s; try again")
                        if settlement.resume(with: .failure(timeout)) { work.cancel() }
                    })
            }
        }

        /// The continuation, resumed once by whichever comes first (the
        /// operation or the timer), and the timer, cancelled when the operation wins.
        private final class Settlement<T: Sendable>: Sendable {
            private let state: Mutex<(continuation: CheckedContinuation<T, any Error>?, timer: Task<Void, Never>?)>

            init(_ continuation: CheckedContinuation<T, any Error>) {
                state = Mutex((continuation, nil))
            }

            /// Keeps the timer to cancel; cancels it at once if the operation already ended.
            func start(timer: Task<Void, Never>) {
                let settled = state.withLock { state in
                    state.timer = timer
                    return state.continuation == nil
                }
                if settled { timer.cancel() }
            }

            /// Resumes the continuation if nothing did yet; whether this call did.
            @discardableResult
            func resume(with result: Result<T, any Error>) -> Bool {
                let (continuation, timer) = state.withLock { state in
                    defer { state = (nil, nil) }
                    return state
                }
                guard let continuation else { return false }
                timer?.cancel()
                continuation.resume(with: result)
                return true
            }
        }
    }
#endif  // Gateway
