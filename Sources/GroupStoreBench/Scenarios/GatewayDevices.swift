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

    /// Part of section 11: a fleet of devices on the fleet's one role
    /// (`groupstore_device`, each device a token's `sub`), simulated in this
    /// process — each a ``GatewayRemote`` with its push connection that
    /// fetches the public zone and its private zone on every hint, as a bridge
    /// does — through two gateways (pool 10 each). With 1,000 and 10,000
    /// devices, and 1,000 devices through gateways that read every fetch from
    /// the database (`serve --no-fetch-memory`), for reference:
    /// - a save in the public zone, which every device reads → every device has it;
    /// - a burst of 500 saves in 500 devices' private zones (each by another
    ///   session of that device) → each of them has its own;
    /// - for each, the server's transactions and CPU per commit (``ServerWork``);
    /// - every device reports its host at once (the fleet view) → every
    ///   report kept, and the server's work per report; the reference's
    ///   gateways keep each report in its own transaction (`--report-interval 0`);
    /// - the gateways' memory per 1,000 connected devices.
    struct GatewayDevices {
        let bench: Bench
        let server: PostgresServer
        let secret: String

        static let bulletin = CloudRecordType(
            name: "gw_bulletin", scope: .public,
            columns: [
                CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
                CloudColumn(name: "t", kind: .real, declaredType: "REAL", notNull: false, isKey: false),
            ])

        /// What one fleet measured.
        struct Figures {
            let devices: Int
            let connections: Int
            /// Save called → a device has it, in µs, for every device and save.
            let fanOut: [Double]
            let fanOutTransactions: Double
            let fanOutCPU: Double
            let burstSeconds: Double
            let burstTransactions: Double
            let burstCPU: Double
            let mebibytesPerThousand: Double
            /// Every device reports its host → every report kept (s), and the server's work per report.
            let reportSeconds: Double
            let reportTransactions: Double
            let reportCPU: Double
            /// Devices' fetches that failed and were made again (``SimulatedClient/follow()``), and one's error.
            let retries: Int
            let retryReason: String?
        }

        func run() async throws -> [TableRow] {
            try server.psql("GRANT groupstore_device TO authenticator")
            try GatewayChild.createRoles(["bench_poster"], on: server)
            let owner = try PostgresRemote(url: server.url(user: "postgres"), logger: quietLogger)
            let running = Task { try? await owner.run() }
            try await owner.prepare([Self.bulletin, GatewayScenario.type])
            running.cancel()
            let sizes = bench.quick ? [100, 500] : [1000, 10_000]
            var figures: [Figures] = []
            for size in sizes { figures.append(try await measure(devices: size, memory: true)) }
            let reference = try await measure(devices: sizes[0], memory: false)
            return rows(figures, reference: reference)
        }

        private var quietLogger: Logger {
            var logger = Logger(label: "bench")
            logger.logLevel = .critical
            return logger
        }

        private func measure(devices count: Int, memory: Bool) async throws -> Figures {
            let label = "\(count)\(memory ? "" : "-db")"
            FileHandle.standardError.write(Data("bench: \(count) devices\(memory ? "" : ", no fetch memory")…\n".utf8))
            let idle = try server.clientConnections()
            let extra = memory ? [] : ["--no-fetch-memory", "--report-interval", "0"]
            let gateways = [
                try GatewayChild.start(server: server, secret: secret, pool: 10, extra: extra),
                try GatewayChild.start(server: server, secret: secret, pool: 10, extra: extra),
            ]
            defer { for gateway in gateways { gateway.stop() } }
            let rssBefore = gateways.map(\.residentMebibytes).reduce(0, +)
            let client = SimulatedClient.httpClient()
            let logger = quietLogger
            let fleet = try (0..<count).map { index -> SimulatedClient in
                let name = "d\(label)-\(index)"
                let order = index % 2 == 0 ? gateways : gateways.reversed()
                let url = "http://" + order.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
                let token = try GatewayToken.mint(secretFile: secret, role: TokenVerifier.deviceRole, expiresIn: 7200, device: name)
                let remote = try GatewayRemote(GatewayRemote.Configuration(url: url, token: token), client: client, logger: logger)
                return SimulatedClient(remote: remote, zones: [.public, .private("device+" + name)])
            }
            var tasks = try await SimulatedClient.start(fleet, fetchingAtOnce: 64)
            defer { for task in tasks { task.cancel() } }
            let poster = try GatewayRemote(
                GatewayRemote.Configuration(
                    url: gateways[0].url, token: try GatewayToken.mint(secretFile: secret, role: "bench_poster", expiresIn: 7200)),
                client: client, logger: logger)
            func post(_ name: String) async throws -> Double {
                let id = CloudRecordID(zone: .public, type: Self.bulletin.name, name: name)
                let at = monotonicSeconds()
                let results = try await poster.modify([.save(id: id, baseTag: nil, fields: ["t": .real(at)], editedAt: Date())])
                guard case .saved = results.first else { throw BenchFailure("the poster's save of \(name): \(results)") }
                return at
            }
            func waitForAll(_ name: String, _ among: [SimulatedClient], limit: Double) async throws {
                let started = monotonicSeconds()
                while among.contains(where: { !$0.has(name) }) {
                    if monotonicSeconds() - started > limit {
                        let done = among.filter { $0.has(name) }.count
                        throw BenchFailure("only \(done) of \(among.count) devices have \(name) after \(Int(limit)) s")
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            // Every device connected and subscribed: a first save reaches them all, and
            // each fetches its zones once more (its first fetch that finds nothing new is read).
            _ = try await post("warm-\(label)")
            try await waitForAll("warm-\(label)", fleet, limit: 600)
            while fleet.contains(where: { $0.busy.withLock { $0 } > 0 }) { try await Task.sleep(for: .milliseconds(20)) }
            let held = try server.clientConnections() - idle
            let rss = gateways.map(\.residentMebibytes).reduce(0, +) - rssBefore

            // A save in the zone every device reads.
            let saves = bench.quick ? 3 : 5
            var fanOut: [Double] = []
            let work = ServerWork(server: server, listeners: gateways.count)
            try await work.start()
            defer { work.finish() }
            let (fanOutTransactions, fanOutCPU) = try await work.perCommit(saves) {
                for save in 0..<saves {
                    let name = "b\(label)-\(save)"
                    let at = try await post(name)
                    try await waitForAll(name, fleet, limit: 300)
                    for device in fleet { fanOut.append((device.arrivals.withLock { $0[name] ?? .nan } - at) * 1e6) }
                }
            }

            // A burst of saves in private zones, each by another session of its device.
            let burst = min(500, count)
            let targets = Array(fleet.prefix(burst))
            let writers = try (0..<burst).map { index in
                let order = index % 2 == 0 ? gateways : gateways.reversed()
                let token = try GatewayToken.mint(
                    secretFile: secret, role: TokenVerifier.deviceRole, expiresIn: 7200, device: "d\(label)-\(index)")
                return try GatewayRemote(GatewayRemote.Configuration(url: order[1].url, token: token), client: client, logger: logger)
            }
            var burstSeconds = 0.0
            let (burstTransactions, burstCPU) = try await work.perCommit(burst) {
                let started = monotonicSeconds()
                try await Self.sixtyFourAtOnce(writers) { index, writer in
                    let zone = CloudZone.private("device+d\(label)-\(index)")
                    let id = CloudRecordID(zone: zone, type: GatewayScenario.type.name, name: "p\(label)")
                    let results = try await writer.modify([.save(id: id, baseTag: nil, fields: ["t": .real(0)], editedAt: Date())])
                    guard case .saved = results.first else { throw BenchFailure("a private save: \(results)") }
                }
                try await waitForAll("p\(label)", targets, limit: 300)
                burstSeconds = monotonicSeconds() - started
            }
            // Every device reports its host, 64 at once, as bridges do after a sync (the fleet view).
            var reportSeconds = 0.0
            var polls = 0
            let (reportTransactions, reportCPU) = try await work.perCommit(count) {
                let started = monotonicSeconds()
                try await Self.sixtyFourAtOnce(fleet) { index, device in
                    try await device.remote.report(CloudHostReport(host: "bench", appVersion: label, pending: index))
                }
                while (Int(try server.psql("SELECT count(*) FROM groupstore.hosts WHERE app_version = '\(label)'")) ?? 0) < count {
                    polls += 1
                    if monotonicSeconds() - started > 300 { throw BenchFailure("the devices' host reports not all kept after 300 s") }
                    try await Task.sleep(for: .milliseconds(50))
                }
                reportSeconds = monotonicSeconds() - started
            }
            for task in tasks { task.cancel() }
            tasks = []
            try await client.shutdown()
            return Figures(
                devices: count, connections: held, fanOut: fanOut, fanOutTransactions: fanOutTransactions,
                fanOutCPU: fanOutCPU, burstSeconds: burstSeconds, burstTransactions: burstTransactions, burstCPU: burstCPU,
                mebibytesPerThousand: rss * 1000 / Double(count), reportSeconds: reportSeconds,
                // Each poll of the hosts' table was a transaction of its own (and the last one).
                reportTransactions: reportTransactions - Double(polls + 1) / Double(count), reportCPU: reportCPU,
                retries: fleet.reduce(0) { $0 + $1.retries.withLock { $0.count } },
                retryReason: fleet.lazy.compactMap { $0.retries.withLock { $0.first } }.first)
        }

        /// Runs `body` for each of `items` (with its index), 64 at once.
        private static func sixtyFourAtOnce<Item: Sendable>(
            _ items: [Item], _ body: @escaping @Sendable (Int, Item) async throws -> Void
        ) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, item) in items.enumerated() {
                    if index >= 64 { try await group.next() }
                    group.addTask { try await body(index, item) }
                }
                try await group.waitForAll()
            }
        }

        private func rows(_ figures: [Figures], reference: Figures) -> [TableRow] {
            let section = GatewayScenario.section
            var rows: [TableRow] = []
            let database = String(
                format: "no fetch memory, %d devices: %.0f transactions, %.3f s CPU a commit", reference.devices,
                reference.fanOutTransactions, reference.fanOutCPU)
            for figure in figures {
                let devices = figure.devices.formatted()
                rows.append(
                    TableRow(
                        section: section, what: "\(devices) devices (one role, a token each) through 2 gateways: server connections",
                        unit: "connections", value: Double(figure.connections),
                        reference: "gateways' memory: "
                            + String(format: "%.0f MiB per 1,000 devices", figure.mebibytesPerThousand)))
                rows.append(
                    TableRow(
                        section: section, what: "  a save in the zone all \(devices) read → every device has it", unit: "µs",
                        distribution: Distribution(figure.fanOut),
                        reference: "\(figure.fanOut.count) arrivals; \(figure.retries) failed fetches made again"
                            + (figure.retryReason.map { " (one: \($0.prefix(120)))" } ?? "")))
                rows.append(
                    TableRow(
                        section: section,
                        what: "  server work per commit fanned out to \(devices) devices (the listeners' probes left out)",
                        unit: "transactions",
                        value: figure.fanOutTransactions,
                        reference: String(format: "%.3f s CPU a commit; ", figure.fanOutCPU) + database, target: "flat in devices"))
                rows.append(
                    TableRow(
                        section: section,
                        what: "  a burst of \(min(500, figure.devices)) saves in devices' private zones → each has its own",
                        unit: "s", value: figure.burstSeconds,
                        reference: String(
                            format: "%.1f transactions, %.3f s CPU a commit (no fetch memory, %d devices: %.1f s, %.1f transactions)",
                            figure.burstTransactions, figure.burstCPU, reference.devices, reference.burstSeconds,
                            reference.burstTransactions)))
                rows.append(
                    TableRow(
                        section: section, what: "  every one of \(devices) devices reports its host → all kept (fleet view)", unit: "s",
                        value: figure.reportSeconds,
                        reference: String(
                            format:
                                "%.4f transactions, %.5f s CPU a report (each in its own transaction, %d devices: %.2f s, %.2f transactions, %.5f s CPU)",
                            figure.reportTransactions, figure.reportCPU, reference.devices, reference.reportSeconds,
                            reference.reportTransactions, reference.reportCPU)))
            }
            rows.append(
                TableRow(
                    section: section, what: "  reference: a save fanned out to \(reference.devices) devices, no fetch memory", unit: "µs",
                    distribution: Distribution(reference.fanOut), reference: database))
            return rows
        }
    }
#endif  // Gateway
