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

    /// Part of section 11: 1,000 bridges (100 users, 10 hosts each), simulated
    /// in this process — each a ``GatewayRemote`` with its push connection,
    /// fetching its user's private zone on every hint as a bridge does —
    /// through two gateways (pool 10 each) on a server whose `max_connections`
    /// is 100; a burst of saves (one per user, five rounds); the time until
    /// every bridge has its user's records, each hop, the server's CPU and the
    /// connections it held, beside what direct bridges hold (measured on 10).
    struct GatewayFleet {
        let bench: Bench
        let server: PostgresServer
        let secret: String

        func run() async throws -> [TableRow] {
            let bridges = bench.quick ? 200 : 1000
            let users = bridges / 10
            let rounds = 5
            var logger = Logger(label: "bench")
            logger.logLevel = .critical
            try server.psql("ALTER SYSTEM SET max_connections = 100")
            try server.restart()
            let roles = (0..<users).map { "fleet_u\($0)" }
            try GatewayChild.createRoles(roles, on: server)
            let type = GatewayScenario.type
            // Direct bridges, for reference: the connections each holds once busy.
            let idle = try server.clientConnections()
            var direct: [PostgresRemote] = []
            var running: [Task<Void, Never>] = []
            for _ in 0..<10 {
                let remote = try PostgresRemote(url: server.url(user: roles[0]), logger: logger)
                running.append(Task { try? await remote.run() })
                direct.append(remote)
            }
            try await direct[0].prepare([type])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for remote in direct {
                    for _ in 0..<4 { group.addTask { _ = try await remote.fetchChanges(in: .private(roles[0]), since: nil, limit: 10) } }
                }
                try await group.waitForAll()
            }
            let perDirectBridge = Double(try server.clientConnections() - idle) / 10
            for task in running { task.cancel() }
            for task in running { await task.value }
            // The gateways and the fleet.
            let gateways = [
                try GatewayChild.start(server: server, secret: secret, pool: 10),
                try GatewayChild.start(server: server, secret: secret, pool: 10),
            ]
            defer { for gateway in gateways { gateway.stop() } }
            let client = SimulatedClient.httpClient()
            var fleet: [SimulatedClient] = []
            var tasks: [Task<Void, Never>] = []
            defer { for task in tasks { task.cancel() } }
            for index in 0..<bridges {
                let role = roles[index % users]
                // Half list the second gateway first: a load balancer's share.
                let order = index % 2 == 0 ? gateways : gateways.reversed()
                let url = "http://" + order.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
                let token = try GatewayToken.mint(secretFile: secret, role: role, expiresIn: 3600)
                let remote = try GatewayRemote(GatewayRemote.Configuration(url: url, token: token), client: client, logger: logger)
                fleet.append(SimulatedClient(remote: remote, zones: [.private(role)]))
            }
            tasks = try await SimulatedClient.start(fleet, fetchingAtOnce: 32)
            // Push connections open and subscribe (settling, not synchronisation: a benchmark).
            try await Task.sleep(for: .seconds(bench.quick ? 2 : 5))
            var held = try server.clientConnections()
            let writers = try roles.map { role in
                try GatewayRemote(
                    GatewayRemote.Configuration(
                        url: gateways[0].url, token: try GatewayToken.mint(secretFile: secret, role: role, expiresIn: 3600)),
                    client: client,
                    logger: logger)
            }
            let cpuBefore = FleetScenario.serverCPUSeconds()
            let gatewayCPUBefore = gateways.map(\.cpuSeconds).reduce(0, +)
            let started = monotonicSeconds()
            let written = Stamps()
            for round in 0..<rounds {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (user, writer) in writers.enumerated() {
                        group.addTask {
                            let name = "r\(round)"
                            let id = CloudRecordID(zone: .private(roles[user]), type: type.name, name: name)
                            let at = monotonicSeconds()
                            written.times.withLock { $0[roles[user] + "/" + name] = at }
                            _ = try await writer.modify([.save(id: id, baseTag: nil, fields: ["t": .real(at)], editedAt: Date())])
                        }
                    }
                    try await group.waitForAll()
                }
                if round == rounds / 2 { held = max(held, try server.clientConnections()) }
            }
            // Until every bridge has its user's records.
            let limit = bench.quick ? 120.0 : 300.0
            while fleet.contains(where: { bridge in bridge.arrivals.withLock { $0.count } < rounds }) {
                if monotonicSeconds() - started > limit {
                    let done = fleet.filter { bridge in bridge.arrivals.withLock { $0.count } >= rounds }.count
                    throw BenchFailure("only \(done) of \(bridges) bridges converged in \(Int(limit)) s")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            let converged = monotonicSeconds() - started
            let serverCPU = FleetScenario.serverCPUSeconds() - cpuBefore
            let gatewayCPU = gateways.map(\.cpuSeconds).reduce(0, +) - gatewayCPUBefore
            held = max(held, try server.clientConnections())
            let writtenAt = written.times.withLock { $0 }
            var hops: [Double] = []
            for bridge in fleet {
                for (name, at) in bridge.arrivals.withLock({ $0 }) {
                    if let start = writtenAt[bridge.zones[0].owner + "/" + name] { hops.append((at - start) * 1e6) }
                }
            }
            let directTotal = perDirectBridge * Double(bridges)
            for task in tasks { task.cancel() }
            tasks = []
            try await client.shutdown()
            return [
                TableRow(
                    section: GatewayScenario.section,
                    what: "\(bridges) bridges through 2 gateways (pool 10 each): server connections held (max_connections 100)",
                    unit: "connections", value: Double(held - idle),
                    reference: String(
                        format: "direct: %.1f a bridge (measured on 10) → %.0f for %d", perDirectBridge, directTotal, bridges),
                    ratio: Double(held - idle) / directTotal, target: "≤ 30 per 1,000 bridges"),
                TableRow(
                    section: GatewayScenario.section,
                    what: "  a burst of \(users * rounds) saves (\(rounds) per user) → every one of the \(bridges) bridges has its user's",
                    unit: "s", value: converged,
                    reference: String(
                        format: "server CPU meanwhile %.2f s (%.0f %% of a core); gateways %.2f s", serverCPU, 100 * serverCPU / converged,
                        gatewayCPU)),
                TableRow(
                    section: GatewayScenario.section, what: "  hop at that scale: save called → a bridge of its user has it", unit: "µs",
                    distribution: Distribution(hops), reference: "\(hops.count) arrivals"),
            ]
        }

        /// When each record was saved, by `role/name`.
        final class Stamps: Sendable {
            let times = Mutex<[String: Double]>([:])
        }
    }
#endif  // Gateway
