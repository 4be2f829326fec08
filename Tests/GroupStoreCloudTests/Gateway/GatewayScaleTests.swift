#if Gateway
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import PostgresTestServer
    import Synchronization
    import XCTest

    /// The scale benchmark's shape, small: many clients that speak the real
    /// protocol (each a ``GatewayRemote`` with its push connection, fetching
    /// its user's zone on every hint, as a bridge does) through two gateway
    /// processes; the server holds the gateways' pools and listeners only,
    /// and a burst of saves reaches every client. (`groupstore-bench run
    /// --only gateway-scale` runs 1,000 of them.)
    final class GatewayScaleTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .gateway }

        static let type = CloudRecordType(
            name: "scale_note", scope: .private,
            columns: [
                CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
                CloudColumn(name: "n", kind: .integer, declaredType: "INTEGER", notNull: false, isKey: false),
            ])

        /// One simulated bridge: the names it has fetched of its zone.
        final class Client: Sendable {
            let remote: GatewayRemote
            let zone: CloudZone
            let names = Mutex<Set<String>>([])
            let token = Mutex<CloudChangeToken?>(nil)

            init(remote: GatewayRemote, zone: CloudZone) {
                self.remote = remote
                self.zone = zone
            }

            /// Fetches at once, as a bridge starts, then on every hint; yields
            /// once it has `expected` records.
            func follow(_ hints: AsyncStream<Void>, expected: Int, done: AsyncStream<Void>.Continuation) async {
                var told = false
                func fetch() async {
                    do {
                        while true {
                            let batch = try await remote.fetchChanges(in: zone, since: token.withLock { $0 }, limit: 100)
                            names.withLock { names in for record in batch.changed { names.insert(record.id.name) } }
                            token.withLock { $0 = batch.token }
                            if !batch.moreComing { break }
                        }
                    } catch {
                        return
                    }
                    if !told, names.withLock({ $0.count }) >= expected {
                        told = true
                        done.yield()
                    }
                }
                await fetch()
                for await _ in hints { await fetch() }
            }
        }

        func testAHundredClientsThroughTwoGateways_holdOnlyTheirPools_andABurstReachesEveryOne() async throws {
            let users = (0..<10).map { "scale_u\($0)" }
            for user in users {
                try server.createRole(user)
                try server.psql("GRANT groupstore_user TO \(user); GRANT \(user) TO authenticator")
            }
            gateways.append(try GatewayProcess.start(server: server, secret: gatewaySecret, pool: 4))
            let setup = try gatewayRemote(user: users[0])
            try await setup.prepare([Self.type])
            let perUser = 10
            let records = 3
            let clients = try (0..<(users.count * perUser)).map { index -> Client in
                let user = users[index % users.count]
                // Half list the second gateway first, as a load balancer would spread them.
                let ports = index % 2 == 0 ? gatewayPorts : gatewayPorts.reversed()
                let url = "http://" + ports.map { "127.0.0.1:\($0)" }.joined(separator: ",")
                let remote = try GatewayRemote(GatewayRemote.Configuration(url: url, token: try gatewaySecret.token(role: user)))
                return Client(remote: remote, zone: .private(user))
            }
            let (done, tell) = AsyncStream.makeStream(of: Void.self)
            var tasks: [Task<Void, Never>] = []
            defer { for task in tasks { task.cancel() } }
            for client in clients {
                let hints = client.remote.pushHints()
                tasks.append(Task { try? await client.remote.run() })
                tasks.append(Task { await client.follow(hints, expected: records, done: tell) })
            }
            // The burst: each user saves its records through the first gateway.
            for user in users {
                let writer = try gatewayRemote(user: user)
                let changes = (0..<records).map { index in
                    CloudRecordChange.save(
                        id: CloudRecordID(zone: .private(user), type: Self.type.name, name: "r\(index)"), baseTag: nil,
                        fields: ["n": .integer(Int64(index))], editedAt: Date())
                }
                let results = try await writer.modify(changes)
                for result in results {
                    guard case .saved = result else { return XCTFail("\(user)'s save: \(result)") }
                }
            }
            let converged = try await deadline(120, "every client has its user's \(records) records") { () -> Int? in
                var count = 0
                for await _ in done {
                    count += 1
                    if count == clients.count { return count }
                }
                return nil
            }
            XCTAssertEqual(converged, clients.count)
            // Each client has exactly its own user's records.
            for client in clients {
                XCTAssertEqual(client.names.withLock { $0 }, Set((0..<records).map { "r\($0)" }), "\(client.zone)")
            }
            // The server holds the gateways' connections only: two pools of 4 and two listeners.
            let held =
                Int(
                    try server.psql(
                        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename = 'authenticator'")) ?? -1
            XCTAssertGreaterThan(held, 0)
            XCTAssertLessThanOrEqual(held, 2 * (4 + 1), "connections of the gateways for \(clients.count) clients")
        }
    }
#endif  // Gateway
