#if Gateway
    import AsyncHTTPClient
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import GroupStoreCloudPostgres
    import GroupStoreGateway
    import Logging
    import PostgresTestServer
    import Synchronization

    /// Section 11: the sync gateway (`groupstore serve` processes) in front of a
    /// PostgreSQL server started for the run, each figure beside its reference
    /// measured in the same run: the hop through a gateway and the direct hop;
    /// the requests one gateway serves a second; and a fleet of 1,000 bridges
    /// (simulated: each a ``GatewayRemote`` that fetches its zone on every push
    /// hint, as a bridge does) through two gateways on a server whose
    /// `max_connections` is 100, beside the connections direct bridges hold.
    struct GatewayScenario {
        let bench: Bench
        static let section = "11. sync gateway (PostgreSQL behind groupstore serve)"
        static let parts = ["hop", "rps", "scale", "devices"]

        static let type = CloudRecordType(
            name: "gw_note", scope: .private,
            columns: [
                CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
                CloudColumn(name: "t", kind: .real, declaredType: "REAL", notNull: false, isKey: false),
            ])

        var quiet: Logger {
            var logger = Logger(label: "bench")
            logger.logLevel = .error
            return logger
        }

        func run(parts: Set<String>) async throws -> [TableRow] {
            let server = try PostgresServer.start()
            defer { server.stop() }
            _ = try await PostgresRemote.setup(url: server.url(user: "postgres"))
            let secret = try GatewayChild.prepare(server, directory: try bench.directory("gateway"))
            var rows: [TableRow] = []
            if parts.contains("hop") { rows += try await hop(server, secret: secret) }
            if parts.contains("rps") { rows += try await requestsPerSecond(server, secret: secret) }
            if parts.contains("scale") { rows += try await GatewayFleet(bench: bench, server: server, secret: secret).run() }
            if parts.contains("devices") { rows += try await GatewayDevices(bench: bench, server: server, secret: secret).run() }
            return rows
        }

        /// Commit in group A → did-save in group B, each group's bridge through
        /// one gateway, beside the same through PostgreSQL directly, their
        /// samples taken in turn (``CloudScenario/hops(_:storage:)``).
        func hop(_ server: PostgresServer, secret: String) async throws -> [TableRow] {
            // A role per part and path: the tmpfs and the disk runs must not share a zone.
            let parts = ["latency_tmpfs", "latency_disk"]
            try GatewayChild.createRoles(parts.flatMap { ["bench_direct_" + $0, "bench_hop_" + $0] }, on: server)
            let gateway = try GatewayChild.start(server: server, secret: secret, pool: 10)
            defer { gateway.stop() }
            let logger = quiet
            let direct = CloudScenario(
                bench: bench, section: Self.section,
                remote: { part, _ in
                    let role = "bench_direct_" + part.replacingOccurrences(of: "-", with: "_")
                    let remote = try PostgresRemote(url: server.url(user: role), logger: logger)
                    Task { try? await remote.run() }
                    return remote
                }, latencyTarget: "reference")
            let through = CloudScenario(
                bench: bench, section: Self.section,
                remote: { part, _ in
                    let role = "bench_hop_" + part.replacingOccurrences(of: "-", with: "_")
                    let token = try GatewayToken.mint(secretFile: secret, role: role, expiresIn: 3600)
                    let remote = try GatewayRemote(GatewayRemote.Configuration(url: gateway.url, token: token), logger: logger)
                    Task { try? await remote.run() }
                    return remote
                }, latencyTarget: "p50 ≤ 10000 µs")
            let alone = try await callsAlone(server, gateway: gateway, secret: secret)
            // Both paths take their samples in turn, in blocks (see `hops`).
            var directRows: [TableRow] = []
            var gatewayRows: [TableRow] = []
            for storage in ["tmpfs", "disk"] {
                let samples = try await CloudScenario.hops([direct, through], storage: storage)
                directRows += direct.latencyRows(samples[0], storage: storage)
                gatewayRows += through.latencyRows(samples[1], storage: storage)
            }
            func headline(_ rows: [TableRow], _ storage: String) -> TableRow? {
                rows.first { $0.what.hasPrefix("commit in group A") && $0.what.contains(storage) }
            }
            // The direct hop's stages too, beside the gateway's (where the gap is).
            var rows = directRows.map { row in
                var row = row
                row.what =
                    (row.what.hasPrefix("  commit →") ? "  direct: " : "direct PostgreSQL: ")
                    + row.what.trimmingCharacters(in: .whitespaces)
                return row
            }
            rows += gatewayRows.map { row in
                var row = row
                row.what = (row.what.hasPrefix("  ") ? "  " : "through a gateway: ") + row.what.trimmingCharacters(in: .whitespaces)
                return row
            }
            rows += alone
            for storage in ["tmpfs", "disk"] {
                guard let reference = headline(directRows, storage)?.distribution,
                    let measured = headline(gatewayRows, storage)?.distribution
                else { continue }
                rows.append(
                    TableRow(
                        section: Self.section, what: "hop through a gateway vs direct (\(storage))", unit: "µs", distribution: measured,
                        reference: String(format: "direct: %.0f / p99 %.0f µs", reference.median, reference.p99),
                        ratio: measured.median / reference.median, target: "p50 ≤ 10000 µs"))
            }
            return rows
        }

        /// The hop's two remote calls alone (no group, nothing else busy),
        /// directly and through the gateway, in turn: what the gateway adds
        /// to each call, apart from the hop's contention for the cores.
        func callsAlone(_ server: PostgresServer, gateway: GatewayChild, secret: String) async throws -> [TableRow] {
            try GatewayChild.createRoles(["bench_alone_direct", "bench_alone_gateway"], on: server)
            let samples = bench.quick ? 50 : 400
            let logger = quiet
            let direct = try (0..<2).map { _ in try PostgresRemote(url: server.url(user: "bench_alone_direct"), logger: logger) }
            let token = try GatewayToken.mint(secretFile: secret, role: "bench_alone_gateway", expiresIn: 3600)
            let through = try (0..<2).map { _ in
                try GatewayRemote(GatewayRemote.Configuration(url: gateway.url, token: token), logger: logger)
            }
            let running =
                direct.map { remote in Task { try? await remote.run() } } + through.map { remote in Task { try? await remote.run() } }
            defer { for task in running { task.cancel() } }
            let directRows = try await PostgresScenario.callsAlone(
                writer: direct[0], reader: direct[1], zone: .private("bench_alone_direct"), samples: samples, section: Self.section,
                label: "direct PostgreSQL, alone")
            let gatewayRows = try await PostgresScenario.callsAlone(
                writer: through[0], reader: through[1], zone: .private("bench_alone_gateway"), samples: samples, section: Self.section,
                label: "through a gateway, alone")
            return zip(directRows, gatewayRows).flatMap { direct, through in
                var through = through
                if let reference = direct.distribution, let measured = through.distribution {
                    through.reference = String(format: "direct: %.0f / p99 %.0f µs", reference.median, reference.p99)
                    through.ratio = measured.median / reference.median
                }
                return [direct, through]
            }
        }

        /// Requests a second through one gateway (pool of 10) from 64 clients
        /// at once: fetches that find nothing new (answered from the gateway's
        /// memory, beside a gateway started with `--no-fetch-memory` that reads
        /// the database each time), then one-record saves.
        func requestsPerSecond(_ server: PostgresServer, secret: String) async throws -> [TableRow] {
            try GatewayChild.createRoles(["bench_rps"], on: server)
            let seconds = bench.quick ? 2.0 : 8.0
            let clients = 64
            let cores = ProcessInfo.processInfo.activeProcessorCount
            let baseline = try await nothingNew(server, secret: secret, clients: clients, seconds: seconds, extra: ["--no-fetch-memory"])
            let gateway = try GatewayChild.start(server: server, secret: secret, pool: 10)
            defer { gateway.stop() }
            let fetched = try await nothingNew(server, secret: secret, clients: clients, seconds: seconds, gateway: gateway)
            let (client, remote) = try client(gateway, secret: secret, clients: clients)
            let zone = CloudZone.private("bench_rps")
            let cpuBeforeSaves = gateway.cpuSeconds
            let saves = try await Self.hammer(clients: clients, seconds: seconds) { client, count in
                let id = CloudRecordID(zone: zone, type: Self.type.name, name: "c\(client)-\(count)")
                _ = try await remote.modify([.save(id: id, baseTag: nil, fields: ["t": .real(0)], editedAt: Date())])
            }
            let saveRate = Double(saves.calls) / saves.elapsed
            let saveCPU = (gateway.cpuSeconds - cpuBeforeSaves) / saves.elapsed
            try await client.shutdown()
            return [
                TableRow(
                    section: Self.section, what: "one gateway, \(clients) clients: fetches finding nothing new (gateway's memory)",
                    unit: "requests/s", value: fetched.rate,
                    reference: String(
                        format:
                            "database each time: %.0f requests/s; server CPU %.0f %% vs %.0f %%, gateway %.0f %% vs %.0f %% of a core; all on %d cores",
                        baseline.rate, fetched.serverCPU * 100, baseline.serverCPU * 100, fetched.gatewayCPU * 100,
                        baseline.gatewayCPU * 100,
                        cores),
                    ratio: fetched.rate / baseline.rate),
                TableRow(
                    section: Self.section, what: "one gateway, \(clients) clients: one-record saves", unit: "requests/s", value: saveRate,
                    reference: String(format: "gateway CPU %.0f %% of a core", saveCPU * 100)),
            ]
        }

        /// Calls `body` from `clients` tasks at once, each over and over for
        /// `seconds` (given its client's number and its count of calls so far):
        /// how many calls ended, in how long.
        static func hammer(
            clients: Int, seconds: Double, _ body: @escaping @Sendable (_ client: Int, _ count: Int) async throws -> Void
        ) async throws -> (calls: Int, elapsed: Double) {
            let started = monotonicSeconds()
            let calls = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in 0..<clients {
                    group.addTask {
                        var count = 0
                        while monotonicSeconds() - started < seconds {
                            try await body(client, count)
                            count += 1
                        }
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
            return (calls, monotonicSeconds() - started)
        }

        /// A client of `gateway` acting as `bench_rps`, its HTTP client allowed `clients` connections.
        func client(_ gateway: GatewayChild, secret: String, clients: Int) throws -> (HTTPClient, GatewayRemote) {
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = clients
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            let token = try GatewayToken.mint(secretFile: secret, role: "bench_rps", expiresIn: 3600)
            return (client, try GatewayRemote(GatewayRemote.Configuration(url: gateway.url, token: token), client: client, logger: quiet))
        }

        /// `clients` clients fetching a zone with nothing new for `seconds`
        /// through `gateway` (one started with `extra` when `nil`, stopped
        /// after): requests a second, and the gateway's and the server's CPU
        /// meanwhile, in cores.
        func nothingNew(
            _ server: PostgresServer, secret: String, clients: Int, seconds: Double, extra: [String] = [],
            gateway given: GatewayChild? = nil
        ) async throws -> (rate: Double, gatewayCPU: Double, serverCPU: Double) {
            let gateway = try given ?? GatewayChild.start(server: server, secret: secret, pool: 10, extra: extra)
            defer { if given == nil { gateway.stop() } }
            let (client, remote) = try client(gateway, secret: secret, clients: clients)
            try await remote.prepare([Self.type])
            let zone = CloudZone.private("bench_rps")
            var listing = try await remote.fetchChanges(in: zone, since: nil, limit: 100)
            while listing.moreComing { listing = try await remote.fetchChanges(in: zone, since: listing.token, limit: 100) }
            let token = listing.token
            let (cpuBefore, serverBefore) = (gateway.cpuSeconds, FleetScenario.serverCPUSeconds())
            let fetches = try await Self.hammer(clients: clients, seconds: seconds) { _, _ in
                _ = try await remote.fetchChanges(in: zone, since: token, limit: 100)
            }
            let elapsed = fetches.elapsed
            let result = (
                Double(fetches.calls) / elapsed, (gateway.cpuSeconds - cpuBefore) / elapsed,
                (FleetScenario.serverCPUSeconds() - serverBefore) / elapsed
            )
            try await client.shutdown()
            return result
        }
    }
#endif  // Gateway
