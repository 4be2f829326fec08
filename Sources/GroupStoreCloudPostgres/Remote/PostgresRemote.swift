#if Postgres
    import Foundation
    import GroupStoreCloud
    import Logging
    import PostgresNIO
    import ServiceLifecycle
    import Synchronization

    /// The bridge's remote on a PostgreSQL server (15 or later): each synced
    /// table a typed table in schema `public` that `psql` or any service can
    /// read and change (such changes sync down), a gap-free change log read
    /// behind the transaction fence, each user a database role whose rows
    /// row-level security guards, and push hints by `LISTEN`/`NOTIFY`.
    ///
    /// The server is prepared once with ``setup(url:logger:)`` (`groupstore
    /// cloud setup`) by a role that may create schemas and roles; each user
    /// role is then granted `groupstore_user`. The database role is the user:
    /// ``account()`` is `current_user`.
    ///
    /// The remote is a `Service` (every ``CloudDatabase`` is): run it in the
    /// `ServiceGroup` before the `CloudSync` that uses it (its connection pool
    /// and its listener live in ``run()``); calls made before it runs wait for it.
    ///
    /// ```swift
    /// let remote = try PostgresRemote(url: "postgres://alice@db.example.com/app?sslmode=verify-full", logger: logger)
    /// var configuration = CloudSyncConfiguration(group: "/var/lib/myapp/group", remote: remote, logger: logger)
    /// configuration.privateTables = ["note"]
    /// let sync = CloudSync(configuration)
    /// try await ServiceGroup(services: [remote, sync], logger: logger).run()
    /// ```
    ///
    /// Errors are ``CloudSyncError``s, the bridge's error type, whose codes the
    /// sync engine acts on: a lost connection or a server shutting down is
    /// ``CloudSyncError/Code/transient``, a missing schema or a login that fails
    /// ``CloudSyncError/Code/badRemote``, a role without `groupstore_user`
    /// ``CloudSyncError/Code/permissionDenied``; the PostgreSQL error is kept in
    /// ``CloudSyncError/underlying``.
    public final class PostgresRemote: CloudDatabase {
        /// The URL, without its password in ``PostgresURL/description``.
        public let url: PostgresURL
        public var displayName: String { url.description }

        /// The pools: one, or one on each event loop (``init(url:maximumConnections:poolPerEventLoop:logger:)``).
        let clients: [(loop: (any EventLoop)?, client: PostgresClient)]
        /// The most connections the pool opens.
        public let maximumConnections: Int
        let logger: Logger
        let hints = PushHints()
        /// Hints again shortly when a fetch was held back by the fence.
        let poll = FencePoll()
        /// The notifications, for ``notices()``.
        let noticeHub = Broadcast<PostgresNotice>()
        /// Whether the push listener is connected and listening.
        let listening = Atomic<Bool>(false)
        /// Where the push listener runs, and who follows its notices may run
        /// (a gateway's push hub): its connection's event loop, so that a
        /// notice is handed on without waking another thread.
        package let noticeExecutor = EventLoopExecutor.of(MultiThreadedEventLoopGroup.singleton.next())
        /// Operations holding (or waiting for) a pooled connection.
        let leases = Atomic<Int>(0)
        /// What this remote's writes send with their notifications, so that
        /// its listener knows them (see ``PushHints``): random, and nothing
        /// about the rows.
        package let origin = UUID().uuidString
        let state = Mutex(State())

        struct State {
            /// The remote's epoch (from `groupstore.meta`), once read.
            var epoch: String?
            /// The role, once read.
            var user: String?
            /// Typed tables by name, as last read from the catalog.
            var tables: [String: PostgresTypedTable] = [:]
            /// Subscription conditions the server evaluated once, by table and SQL.
            var checkedFilters: Set<String> = []
        }

        /// The most records one page of a fetch holds, whatever limit is asked for.
        public static let maxFetchLimit = 10_000
        /// The most changes, and the most estimated bytes, one ``modify(_:)`` takes.
        public static let maxBatchRecords = 400
        public static let maxBatchBytes = 2_000_000

        /// - Parameters:
        ///   - url: `postgres://` or `postgresql://` (see ``PostgresURL``).
        ///   - maximumConnections: the most connections the pool opens (the
        ///     push listener has one more of its own).
        ///   - poolPerEventLoop: a pool of its own on each of NIO's event
        ///     loops (`MultiThreadedEventLoopGroup.singleton`), sharing
        ///     `maximumConnections` out; an operation started on a loop's
        ///     thread takes a connection of that loop (a gateway's request
        ///     does: `PostgresGatewayBackend`), and one started elsewhere a
        ///     connection of the first loop's pool.
        ///   - logger: where the remote logs (at info and below).
        /// - Throws: ``CloudSyncError/Code/badRemote`` for a URL that does not parse.
        public init(
            url: String, maximumConnections: Int = 4, poolPerEventLoop: Bool = false,
            logger: Logger = Logger(label: "GroupStoreCloudPostgres")
        ) throws {
            let url = try PostgresURL(url)
            let maximum = max(1, maximumConnections)
            self.url = url
            self.logger = logger
            self.maximumConnections = maximum
            // The pool's own messages (reconnections, a lease before `run()`)
            // are not the library's to show, but for errors.
            let background = Self.quiet(logger, below: .error)
            if poolPerEventLoop {
                // The connections shared out among the loops (no loop without one: fewer pools).
                let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator().prefix(maximum))
                clients = loops.enumerated().map { index, loop in
                    let size = maximum / loops.count + (index < maximum % loops.count ? 1 : 0)
                    var configuration = url.clientConfiguration(maximumConnections: size)
                    // No keep-alive query: the pool arms each connection's keep-alive timer when it
                    // goes back idle, with tasks of Swift's global pool, so every operation woke
                    // its threads (measured: docs/PERFORMANCE.md, "fifth session"). A connection the
                    // network dropped meanwhile is found by its next statement (`bounded` closes it).
                    configuration.options.keepAliveBehavior = nil
                    return (loop, PostgresClient(configuration: configuration, eventLoopGroup: loop, backgroundLogger: background))
                }
            } else {
                clients = [
                    (nil, PostgresClient(configuration: url.clientConfiguration(maximumConnections: maximum), backgroundLogger: background))
                ]
            }
        }

        /// The pool on the current thread's event loop, if it has one, else the first.
        /// (The current loop's connections answer on the thread that waits for them.)
        var client: PostgresClient {
            guard clients.count > 1, let loop = MultiThreadedEventLoopGroup.currentEventLoop else { return clients[0].client }
            return (clients.first { $0.loop === loop } ?? clients[0]).client
        }

        /// Runs the connection pool and the push listener until cancelled or
        /// told to shut down gracefully.
        public func run() async throws {
            await cancelWhenGracefulShutdown {
                await withDiscardingTaskGroup { group in
                    for (_, client) in self.clients { group.addTask { await client.run() } }
                    group.addTask(executorPreference: self.noticeExecutor) { await self.listen() }
                }
            }
            hints.finish()
            noticeHub.finish()
        }

        /// The role logged in as (`current_user`), after checking that the
        /// server can be reached on a connection of its own (the pool would wait
        /// for it), that the role is granted `groupstore_user`, and that the
        /// GroupStore schema is there.
        public func account() async throws -> String {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: url.connectionConfiguration(), id: 0, logger: quietLogger)
                try? await connection.close()
            } catch {
                let failure = PostgresFailure.cloudError(error, doing: "connect", remote: displayName)
                let reason = PostgresRemote.reason(error)
                let login: Set<PSQLError.Code> = [.authMechanismRequiresPassword, .unsupportedAuthMechanism, .saslError]
                let loginFailed = PostgresFailure.serverError(error) != nil || (error as? PSQLError).map { login.contains($0.code) } == true
                let verb = loginFailed ? "cannot log in to" : "cannot reach"
                throw CloudSyncError(failure.code, "\(verb) \(displayName): \(reason)", underlying: error)
            }
            return try await account(as: nil)
        }

        /// The role a session acts as, after checking that it is granted
        /// `groupstore_user` and that the GroupStore schema is there. Acting as
        /// a role (a gateway), a role that bypasses row-level security is
        /// refused: the database would not decide what it sees.
        ///
        /// Both reads go in one transaction, which reads them together; acting
        /// as a role, each would otherwise be a transaction of its own
        /// (``PostgresSession``), and a gateway checks a busy role every few seconds.
        func account(as role: String?) async throws -> String {
            try await perform("check the account", as: role) { session in
                try await session.transaction { transaction in try await account(transaction, role: role, device: session.device) }
            }
        }

        /// ``account(as:)``'s reads and checks, in `transaction`.
        private func account(_ transaction: PostgresTransaction, role: String?, device: String?) async throws -> String {
            let roles = try await transaction.cells(
                """
                SELECT current_user::text, pg_has_role(current_user, 'groupstore_user', 'USAGE')::text,
                  (SELECT (rolsuper OR rolbypassrls)::text FROM pg_roles WHERE rolname = current_user)
                """)
            guard let row = roles.first, let user = row[0] else {
                throw CloudSyncError(.badRemote, "the server \(displayName) did not say who is logged in")
            }
            if row[2] == "true" {
                if role != nil {
                    throw CloudSyncError(
                        .unauthorized, "role \(user) bypasses row-level security: the gateway does not act as it")
                }
                logger.info(
                    "role bypasses row-level security: it sees every user's rows",
                    metadata: ["remote": "\(displayName)", "role": "\(user)"])
            } else if row[1] != "true" {
                throw CloudSyncError(
                    .permissionDenied,
                    "role \(user) may not sync through \(displayName): it is not granted groupstore_user (GRANT groupstore_user TO \(PostgresTypedTable.quote(user)))"
                )
            }
            let meta = try await transaction.cells(
                "SELECT (SELECT value FROM groupstore.meta WHERE key = 'epoch'), (SELECT value FROM groupstore.meta WHERE key = 'format')"
            )
            guard let epoch = meta.first?[0], let formatText = meta.first?[1], let format = Int(formatText) else {
                throw CloudSyncError(
                    .badRemote,
                    "the server \(displayName) has no GroupStore schema: run `groupstore cloud setup --remote URL` as a role that may create it"
                )
            }
            guard format <= PostgresServerSchema.format else {
                throw CloudSyncError(
                    .badRemote,
                    "the server \(displayName) has GroupStore schema format \(format); this GroupStore reads up to format \(PostgresServerSchema.format): upgrade GroupStore"
                )
            }
            guard format == PostgresServerSchema.format else {
                throw CloudSyncError(
                    .badRemote,
                    "the server \(displayName) has GroupStore schema format \(format); this GroupStore needs format \(PostgresServerSchema.format): run `groupstore cloud setup --remote URL` to upgrade it"
                )
            }
            state.withLock { state in
                if state.epoch != epoch { state.tables = [:] }
                state.epoch = epoch
                if role == nil { state.user = user }
            }
            return device.map { PostgresServerSchema.devicePrefix + $0 } ?? user
        }

        /// The latest change of the log, whether `mark` is part of the
        /// server's history (``CloudHistoryMark/entry`` is the transaction of
        /// the change at its position: a database restored from a dump and
        /// written to since logs other transactions there), and the server's clock.
        public func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory {
            try await history(keeping: mark, as: nil)
        }

        func history(keeping mark: CloudHistoryMark?, as role: String?) async throws -> CloudRemoteHistory {
            try await perform("read the history", as: role) { session in
                let rows = try await session.cells(HistoryGuard.historyRead(mark).query)
                let history = try Self.history(rows.first, keeping: mark, display: displayName)
                noteEpoch(history.head.epoch)
                return history
            }
        }

        /// The epoch a server answered with: on a database set up again, what
        /// was read of the old one (its epoch, its tables) is stale. Returns the
        /// epoch cached before.
        @discardableResult
        func noteEpoch(_ epoch: String) -> String? {
            state.withLock { state in
                let before = state.epoch
                if state.epoch != epoch { state.tables = [:] }
                state.epoch = epoch
                return before
            }
        }

        /// The answer of `groupstore.history(seq)` (`seq`: the mark's position).
        static func history(_ row: [String?]?, keeping mark: CloudHistoryMark?, display: String) throws -> CloudRemoteHistory {
            guard let row, row.count == 6, let epoch = row[0], let head = row[1].flatMap({ Int64($0) }),
                let seconds = row[5].flatMap({ Double($0) })
            else {
                throw CloudSyncError(
                    .badRemote,
                    "the server \(display) has no GroupStore schema of format \(PostgresServerSchema.format): run `groupstore cloud setup --remote URL`"
                )
            }
            let horizon = Int64(row[4] ?? "0") ?? 0
            let keeps =
                mark.map { mark in
                    FeedToken.keeps(mark, epoch: epoch, head: head, horizon: horizon) { $0 == mark.position ? row[3] : nil }
                } ?? true
            return CloudRemoteHistory(
                head: CloudHistoryMark(epoch: epoch, position: head, entry: row[2] ?? ""), keepsMark: keeps,
                now: Date(timeIntervalSince1970: seconds))
        }

        public func prepare(_ types: [CloudRecordType]) async throws {
            try await prepare(types, as: nil)
        }

        func prepare(_ types: [CloudRecordType], as role: String?) async throws {
            try await perform("prepare the record types", as: role) { session in
                for type in types {
                    let columns: [[String: Any]] = type.columns.map { column in
                        [
                            "name": column.name, "kind": column.kind.rawValue, "declaredType": column.declaredType,
                            "isKey": column.isKey, "pgType": PostgresColumnType(for: column).rawValue,
                        ]
                    }
                    let json = String(decoding: try JSONSerialization.data(withJSONObject: columns, options: [.sortedKeys]), as: UTF8.self)
                    var binds = PostgresBindings()
                    binds.append(type.name)
                    binds.append(type.scope.rawValue)
                    binds.append(json)
                    _ = try await session.cells(
                        PostgresQuery(unsafeSQL: "SELECT groupstore.prepare_type($1, $2, $3::jsonb)::text", binds: binds))
                }
                try await loadCatalog(session)
            }
        }

        public func pushHints() -> AsyncStream<Void> { hints.stream() }

        // MARK: Shared plumbing

        /// Runs `body` on a pooled connection, acting as `role` (`nil`: the login
        /// role; see ``PostgresSession``) with `origin` for its writes' notifications
        /// (`nil`: this remote's); errors become ``CloudSyncError``s.
        func perform<T: Sendable>(
            _ what: String, as role: String? = nil, origin: String? = nil, _ body: (PostgresSession) async throws -> T
        ) async throws -> T {
            leases.add(1, ordering: .relaxed)
            defer { leases.subtract(1, ordering: .relaxed) }
            do {
                return try await client.withConnection { connection in
                    let session = PostgresSession(
                        connection: connection, role: role, origin: origin ?? self.origin, logger: logger,
                        device: role == nil ? nil : Self.actingDevice, deadline: Self.statementDeadline)
                    return try await Self.$leased.withValue(connection) { try await body(session) }
                }
            } catch {
                throw PostgresFailure.cloudError(error, doing: what, remote: displayName)
            }
        }

        /// How long one statement may take before it counts as lost (a
        /// transient error), and how long after its connection closed: a query
        /// written to a connection that the server closed at that moment was
        /// seen never to be answered. (A task-local: a test shortens the first.)
        @TaskLocal static var statementTimeout: TimeAmount = .seconds(30)
        static let afterClose: TimeAmount = .milliseconds(200)

        /// The connection the current ``perform(_:_:)`` leased.
        @TaskLocal static var leased: PostgresConnection?

        /// When the operations run in this task must have ended (a gateway's
        /// request deadline; see ``PostgresRoleRemote/deadline``): each of their
        /// transactions sets `statement_timeout` to the time left (``PostgresSession``).
        @TaskLocal static var statementDeadline: ContinuousClock.Instant?

        /// The device the operations run in this task act for, acting as the
        /// fleet's role (``PostgresRoleRemote/device``).
        @TaskLocal static var actingDevice: String?

        /// `future`'s value, or a transient error after ``statementTimeout``, or
        /// shortly after the leased connection closed. A statement that got no
        /// answer in time closes its connection: the pool makes another, rather
        /// than queue the next operation's statements behind it (a connection
        /// the network dropped without a word answers nothing, ever).
        static func bounded<T: Sendable>(_ future: EventLoopFuture<T>) async throws -> T {
            let settled = Atomic<Bool>(false)
            let connection = leased
            return try await withCheckedThrowingContinuation { continuation in
                let noAnswer = CloudSyncError(.transient, "a statement got no answer (the connection to the server was lost)")
                let lost = { @Sendable in
                    guard !settled.exchange(true, ordering: .acquiringAndReleasing) else { return }
                    continuation.resume(throwing: noAnswer)
                }
                let timer = future.eventLoop.scheduleTask(in: statementTimeout) {
                    guard let connection else { return lost() }
                    guard !settled.exchange(true, ordering: .acquiringAndReleasing) else { return }
                    // Said once closed: the pool's own close callback came first, so the next
                    // operation is not handed this connection.
                    let closing: EventLoopFuture<Void> = connection.close()
                    _ = closing
                    connection.closeFuture.whenComplete { _ in connection.eventLoop.execute { continuation.resume(throwing: noAnswer) } }
                }
                let watch = connection.map { connection in
                    (
                        connection,
                        ConnectionLossWatch.shared.onClose(of: connection) { _ = future.eventLoop.scheduleTask(in: afterClose, lost) }
                    )
                }
                future.whenComplete { result in
                    if let (connection, token) = watch { ConnectionLossWatch.shared.cancel(token, of: connection) }
                    guard !settled.exchange(true, ordering: .acquiringAndReleasing) else { return }
                    timer.cancel()
                    continuation.resume(with: result)
                }
            }
        }

        /// Every row `query` answered, each cell read as text (`nil` for NULL):
        /// the queries cast what they select to text.
        static func cells(_ query: EventLoopFuture<PostgresQueryResult>) async throws -> [[String?]] {
            try await bounded(query).rows.map { row in try row.map { try $0.decode(String?.self) } }
        }

        /// The epoch, reading it if not known yet.
        func epoch(_ session: PostgresSession) async throws -> String {
            if let epoch = state.withLock({ $0.epoch }) { return epoch }
            let rows = try await session.cells("SELECT value FROM groupstore.meta WHERE key = 'epoch'")
            guard let epoch = rows.first?.first ?? nil else {
                throw CloudSyncError(
                    .badRemote, "the server \(displayName) has no GroupStore schema: run `groupstore cloud setup --remote URL`")
            }
            state.withLock { $0.epoch = epoch }
            return epoch
        }

        /// The user the session acts as: a device's name (``PostgresServerSchema/devicePrefix``
        /// and its `sub`), the role, or for the login role, reading it if not known yet.
        func user(_ session: PostgresSession) async throws -> String {
            if let device = session.device { return PostgresServerSchema.devicePrefix + device }
            if let role = session.role { return role }
            if let user = state.withLock({ $0.user }) { return user }
            let rows = try await session.cells("SELECT current_user::text")
            let user = (rows.first?.first ?? nil) ?? ""
            state.withLock { $0.user = user }
            return user
        }

        /// Reads every record type's typed table from the server's catalog.
        @discardableResult
        func loadCatalog(_ reader: some PostgresReader) async throws -> [String: PostgresTypedTable] {
            let rows = try await reader.cells(
                """
                SELECT t.name, t.scope, array_to_json(t.key_columns)::text, a.attname::text, format_type(a.atttypid, a.atttypmod)
                FROM groupstore.types AS t
                JOIN pg_attribute AS a ON a.attrelid = to_regclass(format('public.%I', t.name))
                WHERE a.attnum > 0 AND NOT a.attisdropped AND a.attname NOT LIKE 'gs\\_%'
                ORDER BY t.name, a.attnum
                """)
            var grouped: [String: (scope: CloudScope, keys: [String], columns: [(name: String, type: PostgresColumnType)])] = [:]
            var order: [String] = []
            for row in rows {
                guard let name = row[0], let scope = row[1].flatMap(CloudScope.init(rawValue:)), let column = row[3] else { continue }
                if grouped[name] == nil {
                    let keys = (try? JSONSerialization.jsonObject(with: Data((row[2] ?? "[]").utf8))) as? [String] ?? []
                    grouped[name] = (scope, keys, [])
                    order.append(name)
                }
                if let type = row[4].flatMap(PostgresColumnType.init(rawValue:)) { grouped[name]?.columns.append((column, type)) }
            }
            var tables: [String: PostgresTypedTable] = [:]
            for name in order {
                let entry = grouped[name]!
                tables[name] = PostgresTypedTable(name: name, scope: entry.scope, keyColumns: entry.keys, columns: entry.columns)
            }
            state.withLock { $0.tables = tables }
            return tables
        }

        /// The typed tables, reading the catalog if `names` are not all known.
        func tables(_ names: some Sequence<String>, _ reader: some PostgresReader) async throws -> [String: PostgresTypedTable] {
            let known = state.withLock { $0.tables }
            // Nothing known yet (a remote that fetches before it prepares anything): read the catalog.
            if !known.isEmpty, names.allSatisfy({ PostgresTypedTable.named($0, in: known) != nil }) { return known }
            return try await loadCatalog(reader)
        }
    }
#endif  // Postgres
