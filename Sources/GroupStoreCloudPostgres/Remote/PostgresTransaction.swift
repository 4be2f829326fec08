#if Postgres
    import GroupStoreCloud
    import Logging
    import PostgresNIO

    /// One transaction on a leased connection whose statements are queued at
    /// once: `BEGIN`, the role and the planner settings go out with the first
    /// statements, and ``sendCommit()`` puts `COMMIT` behind the last ones, so
    /// the body waits only for answers it needs before it can send more.
    ///
    /// The connection still runs them one after the other: postgres-nio sends a
    /// statement when the server has answered the one before (it does not
    /// pipeline), so each statement costs a round trip to the server. A read
    /// that needs no earlier answer goes in the settings' statement instead
    /// (``run(_:_:settings:readsInKeyOrder:reading:_:)``).
    ///
    /// Use it through ``run(_:_:settings:readsInKeyOrder:reading:_:)``, which commits
    /// after the body, or rolls back when the body throws, so a pooled
    /// connection never goes back to the pool inside a transaction.
    ///
    /// A statement that fails on the server aborts the transaction: the
    /// statements behind it fail too, and a `COMMIT` already sent rolls back
    /// (its answer is `ROLLBACK`).
    final class PostgresTransaction: PostgresReader {
        let connection: PostgresConnection
        let logger: Logger
        /// The role the transaction acts as (`nil`: the login role).
        let role: String?
        private let begun: EventLoopFuture<PostgresQueryResult>
        private let settingsSet: EventLoopFuture<PostgresQueryResult>
        private var committing: EventLoopFuture<PostgresQueryResult>?
        /// The answer to the read sent with the settings, and how many of its
        /// columns are the read's (the others set the settings).
        private let first: (answer: EventLoopFuture<PostgresQueryResult>, columns: Int)?

        /// A read that goes in the statement setting the settings, so that it
        /// costs no round trip of its own: every row of `function` (a
        /// set-returning function call whose parameters are `binds`, `$1` on),
        /// read before the settings are set. It is the first statement after
        /// `BEGIN`: in a repeatable-read transaction, it takes the snapshot.
        struct FirstRead {
            var function: String
            var binds: PostgresBindings
            /// The columns of `function`'s answer that ``firstRead()`` reads
            /// (0 for a check, whose answer is only whether it raised).
            var columns: Int

            /// The read as a statement of its own.
            var query: PostgresQuery { PostgresQuery(unsafeSQL: "SELECT * FROM \(function)", binds: binds) }
        }

        private init(_ session: PostgresSession, begin: String, settings: [(String, String)], reading read: FirstRead?) {
            connection = session.connection
            logger = session.logger
            role = session.role
            // The role first: a role the login may not become fails this statement, and so
            // every statement of the transaction, before any of them runs.
            let device = session.device.map { [(PostgresServerSchema.deviceSetting, $0)] } ?? []
            let all = (session.role.map { [("role", $0)] } ?? []) + device + settings
            // Acting as another role, the read goes alone after the settings: the server checks
            // who may call a function when it starts the statement, before the role is taken.
            let merged = session.role == nil ? read : nil
            var binds = merged?.binds ?? PostgresBindings()
            var setters: [String] = []
            for (name, value) in all {
                binds.append(name)
                binds.append(value)
                setters.append("set_config($\(binds.count - 1), $\(binds.count), true)")
            }
            begun = connection.query(PostgresQuery(unsafeSQL: begin), logger: logger)
            // The read's columns first (``firstRead()`` keeps those), its function called before the setters.
            let columns = (merged == nil ? [] : ["r.*"]) + setters
            let from = merged.map { " FROM \($0.function) AS r" } ?? ""
            settingsSet = connection.query(
                PostgresQuery(unsafeSQL: "SELECT " + columns.joined(separator: ", ") + from, binds: binds), logger: logger)
            if let merged {
                first = (settingsSet, merged.columns)
            } else if let read {
                first = (connection.query(read.query, logger: logger), read.columns)
            } else {
                first = nil
            }
        }

        /// The rows of the read sent with the settings (see ``FirstRead``),
        /// each cell as text; throws what the read raised.
        func firstRead() async throws -> [[String?]] {
            guard let first else { preconditionFailure("no read was sent with the settings") }
            return try await PostgresRemote.bounded(first.answer).rows.map { row in
                try row.prefix(first.columns).map { try $0.decode(String?.self) }
            }
        }

        /// Runs `body` in a transaction opened with `begin` and committed after
        /// it (unless the body sent `COMMIT` itself with ``sendCommit()``).
        ///
        /// - Parameters:
        ///   - settings: transaction-local settings beside the role and the
        ///     planner's (sent as parameters).
        ///   - readsInKeyOrder: a reader in key order (a listing page) wants
        ///     neither a bitmap scan nor a sort either.
        ///   - read: a read sent with the settings (``firstRead()`` answers it).
        /// - Throws: ``CloudSyncError/Code/unauthorized`` when the session
        ///   acts as a role the login role may not become (or that does not exist).
        static func run<T>(
            _ session: PostgresSession, _ begin: String = "BEGIN", settings: [(String, String)] = [], readsInKeyOrder: Bool = false,
            reading read: FirstRead? = nil, _ body: (PostgresTransaction) async throws -> T
        ) async throws -> T {
            // Every statement of the remote reads by key, in key order; a typed table filled
            // since its statistics were gathered looks tiny to the planner, whose scans of the
            // whole table then grew with it (measured: a 400-record batch into 20,000 rows took
            // 2 s instead of 40 ms, a listing page of 100,000 rows 20-30 ms instead of 1 ms).
            // And no JIT: a plan made to avoid a scan costs 10^10, far above `jit_above_cost`,
            // and compiling it took 300 ms (measured) for statements that run in a millisecond.
            let planner = ["jit"] + (readsInKeyOrder ? ["enable_seqscan", "enable_bitmapscan", "enable_sort"] : ["enable_seqscan"])
            let timeout = try statementTimeout(session)
            let transaction = PostgresTransaction(
                session, begin: begin, settings: planner.map { ($0, "off") } + timeout + settings, reading: read)
            do {
                let value = try await body(transaction)
                try await transaction.commit()
                return value
            } catch {
                let refusal = await transaction.roleRefusal()
                await transaction.end()
                throw refusal ?? error
            }
        }

        /// `statement_timeout` set to the milliseconds left until the session's
        /// deadline (none without one): the server aborts a statement still
        /// running then (SQLSTATE 57014, a transient error) and the transaction
        /// rolls back. A deadline already past sends nothing.
        /// - Throws: ``CloudSyncError/Code/transient`` when the deadline passed
        ///   before the transaction began (waiting for a pooled connection).
        private static func statementTimeout(_ session: PostgresSession) throws -> [(String, String)] {
            guard let deadline = session.deadline else { return [] }
            let left = ContinuousClock.now.duration(to: deadline)
            // Rounded up: the server aborts at the deadline, not before it.
            let milliseconds = left.components.seconds * 1000 + (left.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            guard milliseconds > 0 else {
                throw CloudSyncError(.transient, "the request's deadline passed before its transaction began; try again")
            }
            return [("statement_timeout", String(milliseconds))]
        }

        /// Sends `query` now; its answer is read later, in order with the others.
        func send(_ query: PostgresQuery) -> EventLoopFuture<PostgresQueryResult> {
            connection.query(query, logger: logger)
        }

        /// Every row of a statement sent, each cell as text (see ``PostgresRemote/cells(_:)``).
        func cells(_ query: PostgresQuery) async throws -> [[String?]] {
            try await PostgresRemote.cells(send(query))
        }

        /// Sends `COMMIT` behind what was sent so far; ``run(_:_:settings:readsInKeyOrder:reading:_:)``
        /// reads its answer after the body.
        func sendCommit() {
            guard committing == nil else { return }
            committing = connection.query("COMMIT", logger: logger)
        }

        private func commit() async throws {
            _ = try await PostgresRemote.bounded(begun)
            _ = try await PostgresRemote.bounded(settingsSet)
            sendCommit()
            let answer = try await PostgresRemote.bounded(committing!)
            guard answer.metadata.command == "COMMIT" else {
                // A statement whose answer the body did not read failed: nothing was written.
                throw CloudSyncError(.transient, "a transaction was rolled back by the server (\(answer.metadata.command))")
            }
        }

        /// Whether the transaction failed because its role could not be taken:
        /// the error to throw then, naming the role.
        private func roleRefusal() async -> CloudSyncError? {
            guard let role else { return nil }
            do {
                _ = try await PostgresRemote.bounded(settingsSet)
                return nil
            } catch {
                guard let (state, message) = PostgresFailure.serverError(error), state == "42501" || state == "22023" else { return nil }
                return CloudSyncError(
                    .unauthorized, "the gateway may not act as role \(String(reflecting: role)): \(message)", underlying: error)
            }
        }

        /// After the body threw: the transaction ends without committing what
        /// the body could not finish. A `COMMIT` already sent is waited for (the
        /// body throws only after a statement failed, so it rolls back, or after
        /// it read every answer of a reading transaction).
        private func end() async {
            if let committing {
                _ = try? await PostgresRemote.bounded(committing)
                return
            }
            // Not on a closed connection: a query written to a connection that closed (the
            // server restarted) was seen never to be answered, its promise lost.
            guard !connection.isClosed else { return }
            _ = try? await PostgresRemote.bounded(connection.query("ROLLBACK", logger: logger))
        }
    }
#endif  // Postgres
