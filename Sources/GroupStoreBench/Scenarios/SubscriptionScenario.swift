#if Postgres
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import Logging
    import PostgresTestServer

    /// Part of section 10: subscriptions on PostgreSQL (issue 42). A table
    /// of 1,000,000 rows (100,000 with `--quick`) spread over 100 sites, and
    /// 100 simulated hosts (remote calls as a bridge makes them, one remote
    /// each page) each subscribed to one site (1 %), beside one host of the
    /// whole table in the same run: the initial sync per host; a burst of
    /// 10,000 edits spread over the table, what each host then receives and
    /// the server's CPU per edit; and the cost of a host's fetch as the
    /// number of distinct subscriptions grows from 1 to 1,000.
    struct SubscriptionScenario {
        let bench: Bench
        let server: PostgresServer
        static let section = PostgresScenario.section

        func run() async throws -> [TableRow] {
            let rows = bench.quick ? 100_000 : 1_000_000
            let hosts = 100
            let edits = 10_000
            try server.createRole("bench_subs")
            try server.psql("GRANT groupstore_user TO bench_subs")
            var logger = Logger(label: "bench")
            logger.logLevel = .error
            let remote = try PostgresRemote(url: server.url(user: "bench_subs"), logger: logger)
            let running = Task { try? await remote.run() }
            defer { running.cancel() }
            let columns = [
                CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: false, isKey: true),
                CloudColumn(name: "site", kind: .integer, declaredType: "INTEGER", notNull: false, isKey: false),
                CloudColumn(name: "body", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
            ]
            try await remote.prepare([CloudRecordType(name: "job", scope: .private, columns: columns)])
            let loaded = monotonicSeconds()
            try server.psql(
                "INSERT INTO job (id, site, body) SELECT 'j' || g, g % \(hosts), repeat('x', 40) FROM generate_series(1, \(rows)) AS g",
                as: "bench_subs")
            FileHandle.standardError.write(
                Data("bench: subscriptions: \(rows) rows loaded in \(Int(monotonicSeconds() - loaded)) s\n".utf8))
            let zone = CloudZone.private("bench_subs")
            func subscription(_ site: Int, distinct: Int? = nil) throws -> CloudSubscription {
                let extra = distinct.map { " AND id <> 'none-\($0)'" } ?? ""
                return CloudSubscription(filters: ["job": try CloudFilter("site = \(site)\(extra)")])
            }

            // The initial sync: every page of a listing, then the token after it.
            var tokens: [CloudChangeToken] = []
            var seconds: [Double] = []
            var received: [Double] = []
            var bytes: [Double] = []
            for host in 0..<hosts {
                let (token, count, size, time) = try await sync(remote, zone, since: nil, try subscription(host))
                tokens.append(token)
                (seconds, received, bytes) = (seconds + [time * 1000], received + [Double(count)], bytes + [Double(size)])
            }
            FileHandle.standardError.write(Data("bench: subscriptions: \(hosts) hosts synced\n".utf8))
            let whole = try await sync(remote, zone, since: nil, CloudSubscription())
            let scale = rows.formatted()
            var table = [
                TableRow(
                    section: Self.section,
                    what: "subscriptions: initial sync of a host subscribed to 1 % of \(scale) rows (\(hosts) hosts)",
                    unit: "ms", distribution: Distribution(seconds),
                    reference: String(format: "whole table: %.0f ms", whole.seconds * 1000)),
                TableRow(
                    section: Self.section, what: "subscriptions: rows a host receives in its initial sync", unit: "rows",
                    distribution: Distribution(received), reference: "whole table: \(whole.count)"),
                TableRow(
                    section: Self.section, what: "subscriptions: bytes of records a host receives in its initial sync (JSON)",
                    unit: "bytes",
                    distribution: Distribution(bytes), reference: "whole table: \(whole.bytes)"),
            ]

            // A burst of edits spread over the table and its sites, in one transaction: rows
            // 1 + 7919 i mod N (7919 is prime to N, and 19 to the 100 sites: each site gets 1 %).
            try server.psql(
                "UPDATE job SET body = 'edited' WHERE id IN (SELECT 'j' || (1 + (7919 * i) % \(rows)) FROM generate_series(0, \(edits - 1)) AS i)",
                as: "bench_subs")
            (seconds, received) = ([], [])
            let cpuBefore = FleetScenario.serverCPUSeconds()
            for host in 0..<hosts {
                let fetched = try await sync(remote, zone, since: tokens[host], try subscription(host))
                (seconds, received) = (seconds + [fetched.seconds * 1000], received + [Double(fetched.count)])
            }
            let subscribedCPU = FleetScenario.serverCPUSeconds() - cpuBefore
            FileHandle.standardError.write(Data("bench: subscriptions: the burst fetched by \(hosts) hosts\n".utf8))
            let wholeBefore = FleetScenario.serverCPUSeconds()
            let wholeBurst = try await sync(remote, zone, since: whole.token, CloudSubscription())
            let wholeCPU = FleetScenario.serverCPUSeconds() - wholeBefore
            table += [
                TableRow(
                    section: Self.section,
                    what: "subscriptions: rows a host receives of a burst of \(edits.formatted()) edits over the table",
                    unit: "rows", distribution: Distribution(received), reference: "whole table: \(wholeBurst.count)"),
                TableRow(
                    section: Self.section, what: "subscriptions: a host's fetch of that burst", unit: "ms",
                    distribution: Distribution(seconds),
                    reference: String(format: "whole table: %.0f ms", wholeBurst.seconds * 1000)),
                TableRow(
                    section: Self.section, what: "subscriptions: server CPU per edit, the \(hosts) subscribed hosts' fetches together",
                    unit: "µs", value: subscribedCPU / Double(edits) * 1e6,
                    reference: String(format: "one host of the whole table: %.1f µs", wholeCPU / Double(edits) * 1e6)),
            ]

            // A host's fetch after 1,000 more edits, with 1 to 1,000 distinct subscriptions fetching.
            let token = try await sync(remote, zone, since: whole.token, CloudSubscription()).token
            try server.psql(
                "UPDATE job SET body = 'again' WHERE id IN (SELECT 'j' || (1 + (7919 * i) % \(rows)) FROM generate_series(0, 999) AS i)",
                as: "bench_subs")
            for count in [1, 10, 100, 1000] {
                var times: [Double] = []
                for index in 0..<count {
                    times.append(
                        try await sync(remote, zone, since: token, try subscription(index % hosts, distinct: index)).seconds * 1000)
                }
                table.append(
                    TableRow(
                        section: Self.section,
                        what:
                            "subscriptions: a host's fetch of 1,000 edits, \(count) distinct subscription\(count == 1 ? "" : "s") fetching",
                        unit: "ms", distribution: Distribution(times)))
            }
            return table
        }

        /// Every page from `token`: the token after them, the records
        /// received, their size as JSON, and the seconds it took.
        private func sync(_ remote: PostgresRemote, _ zone: CloudZone, since token: CloudChangeToken?, _ subscription: CloudSubscription)
            async throws -> (token: CloudChangeToken, count: Int, bytes: Int, seconds: Double)
        {
            let started = monotonicSeconds()
            let encoder = JSONEncoder()
            var (token, count, bytes) = (token, 0, 0)
            while true {
                let answer = try await remote.fetchChanges(
                    in: zone, since: token, limit: PostgresRemote.maxFetchLimit, keeping: nil, subscription: subscription)
                guard let page = answer.value else { throw BenchFailure("a subscribed fetch kept no page") }
                count += page.changed.count + page.deleted.count + page.movedOut.count
                for record in page.changed { bytes += try encoder.encode(record).count }
                token = page.token
                if !page.moreComing { break }
            }
            guard let token else { throw BenchFailure("no token") }
            return (token, count, bytes, monotonicSeconds() - started)
        }
    }
#endif  // Postgres
