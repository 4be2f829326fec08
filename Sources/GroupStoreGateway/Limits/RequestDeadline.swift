#if Gateway
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import Hummingbird
    import Synchronization

    /// A request's deadline and the database it bounds: the only way a route
    /// reaches the database (``AuthenticatedContext/database(_:)``), so every
    /// operation runs with it. The backend stops the operation's statements
    /// at the deadline (``GatewayBackend/acting(as:origin:deadline:)``), and
    /// ``Deadline`` answers "try again" only when the operation did not succeed.
    struct RequestDeadline: Sendable {
        /// When the request must have ended.
        let instant: ContinuousClock.Instant
        /// The request timeout it was set with, in seconds (for messages).
        let seconds: Double
        /// How long after it a database that answers nothing is given.
        let grace: Double
        let backend: any GatewayBackend

        /// Runs `body` with the database acting as `identity`, within the deadline.
        func run<T: Sendable>(
            _ what: String, identity: GatewayIdentity, origin: String?,
            _ body: @escaping @Sendable (any GatewayRoleDatabase) async throws -> T
        ) async throws -> T {
            let database = backend.acting(as: identity, origin: origin, deadline: instant)
            return try await Deadline.run(what, seconds: seconds, deadline: instant, grace: grace) { try await body(database) }
        }
    }

    /// Starts the request's deadline (``GatewayConfiguration/requestTimeout``)
    /// once its body has arrived, and hands the routes the database through
    /// it (``RequestDeadline``): a route has no other way to reach it.
    struct DeadlineMiddleware: RouterMiddleware {
        typealias Context = GatewayRequestContext
        let seconds: Double
        let grace: Double
        let backend: any GatewayBackend

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            var context = context
            context.deadline = RequestDeadline(instant: .now + .seconds(seconds), seconds: seconds, grace: grace, backend: backend)
            return try await next(request, context)
        }
    }

    /// Runs an operation that must end by a deadline, and says "try again"
    /// only when it did not succeed:
    ///
    /// - it ends in time: its answer, or its error;
    /// - it ends after the deadline: its answer if it succeeded (it committed,
    ///   however late); if it failed (the database aborted its statement at the
    ///   deadline: nothing of it committed), a transient error naming the deadline;
    /// - it has not ended `grace` seconds after the deadline (a database that
    ///   answers nothing, not even the abort): a transient error saying the
    ///   outcome is unknown, and the operation is cancelled and ends on its own.
    enum Deadline {
        static func run<T: Sendable>(
            _ what: String, seconds: Double, deadline: ContinuousClock.Instant, grace: Double,
            _ operation: @escaping @Sendable () async throws -> T
        ) async throws -> T {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let settlement = Settlement(continuation)
                let work = Task(executorPreference: EventLoopExecutor.current) {
                    do {
                        settlement.resume(with: .success(try await operation()))
                    } catch {
                        settlement.resume(with: .failure(late(error, what, seconds: seconds, deadline: deadline)))
                    }
                }
                settlement.start(
                    timer: Task(executorPreference: EventLoopExecutor.current) {
                        do { try await LoopSleep.until(deadline + .seconds(grace)) } catch { return }
                        let unanswered = CloudSyncError(
                            .transient,
                            "the database did not answer \(what) within \(Int(seconds)) s and \(Int(grace)) s more; "
                                + "its outcome is unknown: try again")
                        if settlement.resume(with: .failure(unanswered)) { work.cancel() }
                    })
            }
        }

        /// `error`, or for a transient failure past the deadline (the
        /// database's abort: `statement_timeout` rolled the transaction back),
        /// the transient error that names the deadline.
        private static func late(_ error: any Error, _ what: String, seconds: Double, deadline: ContinuousClock.Instant) -> any Error {
            guard ContinuousClock.now >= deadline else { return error }
            if let error = error as? CloudSyncError, error.code != .transient { return error }
            return CloudSyncError(
                .transient, "the gateway stopped \(what) at its deadline (\(Int(seconds)) s); try again",
                underlying: error)
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
