#if Postgres
    import GroupStoreCloud
    import Logging
    import PostgresNIO

    /// Where one operation of the remote sends its statements: a leased
    /// connection, acting as the login role or, for a gateway, as the role a
    /// request's token names.
    ///
    /// Acting as a role, every statement runs inside a transaction whose first
    /// statement is `set_config('role', ROLE, true)` — `SET LOCAL ROLE`, as
    /// PostgREST does it — so the role ends with the transaction, whatever
    /// happens to the request, and a role the login may not become fails the
    /// transaction before any statement of the operation runs. A single
    /// statement outside ``PostgresTransaction`` goes in a transaction of its
    /// own, its statements queued at once (`BEGIN`, the role, the statement, `COMMIT`).
    ///
    /// With a ``deadline`` (a gateway's request), each transaction also sets
    /// `statement_timeout` to the time left until it, so that the server
    /// aborts a statement still running then, and the transaction rolls back
    /// and gives its connection back, rather than committing after the
    /// request was answered "try again".
    struct PostgresSession: PostgresReader {
        let connection: PostgresConnection
        /// The role every statement acts as (`nil`: the login role).
        let role: String?
        /// What this session's writes send with their notifications (see ``PushHints``).
        let origin: String
        let logger: Logger
        /// The device the fleet's role acts for (its token's `sub`), set for
        /// every transaction as `groupstore.device` (see
        /// ``PostgresServerSchema/fleet``); `nil` for any other role.
        var device: String? = nil
        /// When the operation must have ended (``PostgresRemote/statementDeadline``), if ever.
        var deadline: ContinuousClock.Instant? = nil

        /// The answer to one statement.
        func result(_ query: PostgresQuery) async throws -> PostgresQueryResult {
            guard role != nil else { return try await PostgresRemote.bounded(connection.query(query, logger: logger)) }
            return try await PostgresTransaction.run(self) { transaction in
                let sent = transaction.send(query)
                transaction.sendCommit()
                return try await PostgresRemote.bounded(sent)
            }
        }

        func cells(_ query: PostgresQuery) async throws -> [[String?]] {
            try await result(query).rows.map { row in try row.map { try $0.decode(String?.self) } }
        }

        /// Runs `body` in a transaction (see ``PostgresTransaction/run(_:_:settings:readsInKeyOrder:reading:_:)``).
        func transaction<T>(
            _ begin: String = "BEGIN", settings: [(String, String)] = [], readsInKeyOrder: Bool = false,
            reading read: PostgresTransaction.FirstRead? = nil, _ body: (PostgresTransaction) async throws -> T
        ) async throws -> T {
            try await PostgresTransaction.run(self, begin, settings: settings, readsInKeyOrder: readsInKeyOrder, reading: read, body)
        }
    }

    /// What reads rows as text: a session (each statement on its own) or a
    /// transaction (in it).
    protocol PostgresReader {
        /// Every row `query` answered, each cell as text (`nil`: NULL).
        func cells(_ query: PostgresQuery) async throws -> [[String?]]
    }
#endif  // Postgres
