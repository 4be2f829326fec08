#if Postgres
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import Logging
    import PostgresNIO
    import PostgresTestServer
    import Subprocesses
    import Synchronization

    /// Section 10: the cloud bridge through a PostgreSQL server started for the
    /// run (on a Unix socket, `fsync` off: the server's own durability is not
    /// what is measured), each part as a role of its own; beside the bare
    /// round trip it builds on: `pg_notify` → a listening connection woken.
    struct PostgresScenario {
        let bench: Bench
        static let section = "10. cloud bridge (PostgreSQL)"

        static let parts = CloudScenario.parts + ["fleet", "subscriptions"]

        func run(parts: Set<String>) async throws -> [TableRow] {
            let server = try PostgresServer.start()
            defer { server.stop() }
            _ = try await PostgresRemote.setup(url: server.url(user: "postgres"))
            var rows = [try await notifyRoundTrip(server), try await flightRoundTrip(server)]
            if parts.contains("latency") { rows += try await remoteCallsAlone(server) }
            let roles = Mutex<Set<String>>([])
            let quiet = {
                var logger = Logger(label: "bench")
                logger.logLevel = .error
                return logger
            }()
            let scenario = CloudScenario(
                bench: bench, section: Self.section,
                remote: { part, _ in
                    let role = "bench_" + part.replacingOccurrences(of: "-", with: "_")
                    if roles.withLock({ $0.insert(role).inserted }) {
                        try server.createRole(role)
                        try server.psql("GRANT groupstore_user TO \(role)")
                    }
                    let remote = try PostgresRemote(url: server.url(user: role), logger: quiet)
                    // Runs until the process ends: the bridge's connections.
                    Task { try? await remote.run() }
                    return remote
                }, latencyTarget: "p50 ≤ 5000 µs")
            rows += try await scenario.run(parts: parts)
            if parts.contains("fleet") { rows.append(try await FleetScenario(bench: bench, server: server).run()) }
            if parts.contains("subscriptions") { rows += try await SubscriptionScenario(bench: bench, server: server).run() }
            return rows
        }

        /// One transaction through a connection pool, as the remote sends a
        /// write (`BEGIN`, a statement, `COMMIT`, queued before the first
        /// answer is read; postgres-nio sends each when the one before is
        /// answered): the floor under a remote call of three statements.
        func flightRoundTrip(_ server: PostgresServer) async throws -> TableRow {
            let logger = Logger(label: "bench")
            let configuration = PostgresClient.Configuration(
                unixSocketPath: server.socketDirectory + "/.s.PGSQL.\(server.port)", username: "postgres", password: nil,
                database: "postgres")
            let client = PostgresClient(configuration: configuration)
            let running = Task { await client.run() }
            defer { running.cancel() }
            var samples: [Double] = []
            let count = bench.quick ? 50 : 400
            for index in 0..<(count + 10) {
                let started = monotonicSeconds()
                try await client.withConnection { connection in
                    let sent: [EventLoopFuture<PostgresQueryResult>] = [
                        connection.query("BEGIN", logger: logger), connection.query("SELECT 1", logger: logger),
                        connection.query("COMMIT", logger: logger),
                    ]
                    for future in sent { _ = try await future.get() }
                }
                if index >= 10 { samples.append((monotonicSeconds() - started) * 1e6) }
            }
            return TableRow(
                section: Self.section,
                what: "reference: BEGIN, SELECT 1, COMMIT queued at once through a pool (postgres-nio: a round trip each)", unit: "µs",
                distribution: Distribution(samples))
        }

        /// The two remote calls of the hop, alone (no group, no other process
        /// busy): a one-record upload (`modify`) on one remote, and the fetch
        /// that brings it to a second remote of the same role; then, in turn
        /// with them, the same two calls checking the history as a bridge
        /// makes them (`keeping:` the mark of the latest change seen): the
        /// price of the check in each call.
        func remoteCallsAlone(_ server: PostgresServer) async throws -> [TableRow] {
            try server.createRole("bench_alone")
            try server.psql("GRANT groupstore_user TO bench_alone")
            var quiet = Logger(label: "bench")
            quiet.logLevel = .error
            let writer = try PostgresRemote(url: server.url(user: "bench_alone"), logger: quiet)
            let reader = try PostgresRemote(url: server.url(user: "bench_alone"), logger: quiet)
            let running = [Task { try? await writer.run() }, Task { try? await reader.run() }]
            defer { for task in running { task.cancel() } }
            return try await Self.callsAlone(
                writer: writer, reader: reader, zone: .private("bench_alone"), samples: bench.quick ? 50 : 400, section: Self.section,
                label: "remote call alone")
        }

        /// The two remote calls of the hop on `writer` and `reader` (two
        /// remotes of one user, whose private zone is `zone`), alone: the
        /// rows of ``remoteCallsAlone(_:)`` in `section`, named from `label`.
        static func callsAlone(
            writer: any CloudDatabase, reader: any CloudDatabase, zone: CloudZone, samples count: Int, section: String, label: String
        ) async throws -> [TableRow] {
            let type = CloudRecordType(
                name: "alone", scope: .private,
                columns: [
                    CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
                    CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
                ])
            _ = try await writer.account()
            _ = try await reader.account()
            try await writer.prepare([type])
            var token = try await reader.fetchChanges(in: zone, since: nil, limit: 100).token
            var (uploads, fetches, checkedUploads, checkedFetches) = ([Double](), [Double](), [Double](), [Double]())
            var mark = try await writer.history(keeping: nil).head
            // Each kind `count` times, in turn.
            for index in 0..<(2 * count + 10) {
                let checked = index % 2 == 1
                let id = CloudRecordID(zone: zone, type: "alone", name: "r\(index)")
                let save = CloudRecordChange.save(id: id, baseTag: nil, fields: ["title": .text("t\(index)")], editedAt: Date())
                let started = monotonicSeconds()
                if checked {
                    let answer = try await writer.modify([save], keeping: mark)
                    guard answer.value != nil else { throw BenchFailure("the upload of r\(index) found the history changed") }
                    mark = answer.history.head
                } else {
                    _ = try await writer.modify([save])
                }
                let uploaded = monotonicSeconds()
                let batch: CloudChangeBatch
                if checked {
                    let answer = try await reader.fetchChanges(in: zone, since: token, limit: 400, keeping: mark)
                    guard let page = answer.value else { throw BenchFailure("the fetch after r\(index) found the history changed") }
                    batch = page
                } else {
                    batch = try await reader.fetchChanges(in: zone, since: token, limit: 400)
                }
                let fetched = monotonicSeconds()
                token = batch.token
                guard batch.changed.map(\.id) == [id] else {
                    throw BenchFailure("the fetch after r\(index) brought \(batch.changed.map(\.id.name))")
                }
                if !checked { mark = try await writer.history(keeping: nil).head }
                guard index >= 10 else { continue }
                if checked {
                    checkedUploads.append((uploaded - started) * 1e6)
                    checkedFetches.append((fetched - uploaded) * 1e6)
                } else {
                    uploads.append((uploaded - started) * 1e6)
                    fetches.append((fetched - uploaded) * 1e6)
                }
            }
            return [
                TableRow(
                    section: section, what: "\(label): upload of one new record (modify)", unit: "µs",
                    distribution: Distribution(uploads)),
                TableRow(
                    section: section, what: "\(label): fetch of that record (feed page and rows)", unit: "µs",
                    distribution: Distribution(fetches)),
                TableRow(
                    section: section, what: "  \(label): the upload checking the history in the call (modify keeping a mark)", unit: "µs",
                    distribution: Distribution(checkedUploads), reference: "in turn with the unchecked upload"),
                TableRow(
                    section: section, what: "  \(label): the fetch checking the history in the call", unit: "µs",
                    distribution: Distribution(checkedFetches), reference: "in turn with the unchecked fetch"),
            ]
        }

        /// `SELECT pg_notify(…)` on one connection → the notification read on
        /// another that listens: the floor under any push through the server, and
        /// the usual server-side alternative to GroupStore between processes (the
        /// notification crosses two server backends).
        func notifyRoundTrip(_ server: PostgresServer, section: String = Self.section) async throws -> TableRow {
            let logger = Logger(label: "bench")
            let configuration = PostgresConnection.Configuration(
                unixSocketPath: server.socketDirectory + "/.s.PGSQL.\(server.port)", username: "postgres", password: nil,
                database: "postgres")
            let listener = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            let sender = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
            let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
            let (ready, isReady) = AsyncStream.makeStream(of: Void.self)
            let listening = Task {
                try await listener.listen(on: "bench") { notifications in
                    isReady.yield()
                    for try await _ in notifications { arrived.yield() }
                }
            }
            var readyIterator = ready.makeAsyncIterator()
            _ = await readyIterator.next()
            var iterator = arrivals.makeAsyncIterator()
            var samples: [Double] = []
            let count = bench.quick ? 50 : 400
            for index in 0..<(count + 10) {
                let started = monotonicSeconds()
                try await sender.query("SELECT pg_notify('bench', '')", logger: logger)
                _ = await iterator.next()
                if index >= 10 { samples.append((monotonicSeconds() - started) * 1e6) }
            }
            listening.cancel()
            try? await sender.close()
            try? await listener.close()
            return TableRow(
                section: section, what: "reference: pg_notify on one connection → a listening connection woken (postgres-nio)", unit: "µs",
                distribution: Distribution(samples))
        }
    }
#endif  // Postgres
