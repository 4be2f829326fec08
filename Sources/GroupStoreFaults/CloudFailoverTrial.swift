#if Postgres && Gateway
    import Foundation
    import GRDB
    import GroupStore
    import PostgresTestServer
    import Subprocesses

    /// A PostgreSQL failover that loses acknowledged commits, under bridges
    /// syncing through a gateway (issue 43): nothing acknowledged is lost.
    ///
    /// One server (started by the trial, as the `postgres` user), a
    /// `groupstore serve` gateway in front of it, and groups A and B each
    /// running `groupstore cloud run` through the gateway, never restarted.
    /// Each failover: a streaming standby is started (asynchronous
    /// replication) and caught up, then cut off; A's writer (this process,
    /// through the library) writes bursts and B a row (`groupstore exec`),
    /// acknowledged by the primary only and taken in by the other group; then
    /// the primary crashes and the standby, which never got those commits, is
    /// promoted on the primary's socket (the URL the gateway reconnects to).
    /// It checks, once settled (bounded): A's rows are what was written, B's
    /// and the server's rows equal them, nothing pending or parked, and both
    /// bridges reported the remote restored (`remoteReset`).
    struct CloudFailoverTrial {
        let suite: FaultSuite
        var harness: CloudHarness { CloudHarness(suite: suite) }
        static let settleBound: TimeInterval = 120
        static let schema = "CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER NOT NULL, note TEXT)"

        func run(failovers: Int, seed: UInt64) -> Outcome {
            let fault = "cloud: PostgreSQL fails over to a standby lacking acknowledged commits, under bridges syncing through a gateway"
            var random = SeededGenerator(seed: seed)
            var (takeOver, converged) = (Durations(), Durations())
            var held = 0
            var failure: String?
            let folder: String
            do { folder = try suite.newFolder("cloud-failover") } catch {
                return Outcome(fault: fault, trials: failovers, passed: false, figures: "\(error)")
            }
            do {
                let server = try PostgresServer.start()
                var standbys: [PostgresServer] = []
                defer {
                    for standby in standbys.reversed() { standby.stop() }
                    server.stop()
                }
                let (groupA, groupB) = (folder + "/A", folder + "/B")
                let (gateway, url, token) = try prepare(server, in: folder)
                var children = [gateway]
                defer {
                    for child in children { child.stop() }
                    CloudHarness.saveOutput(children, in: folder)
                }
                let store = try GroupStore(.cloudTrialWriter(groupA))
                defer { store.closeBlocking() }
                try store.writeBlocking { db in try db.execute(sql: Self.schema) }
                let (status, errors) = try suite.exec(groupB, "setup", Self.schema)
                guard status == 0 else { throw FaultFailure("setting up B failed: \(errors)") }
                var bridges: [Subprocess] = []
                for (group, name) in [(groupA, "A"), (groupB, "B")] {
                    let bridge = try suite.spawn(
                        "groupstore",
                        [
                            "cloud", "run", "--group", group, "--remote", url, "--token-file", token, "--tables", "item", "--format",
                            "jsonl",
                        ], name: "cloud run \(name)")
                    bridges.append(bridge)
                    children.append(bridge)
                    guard CloudHarness.waitSyncing(bridge, timeout: 30) else {
                        throw FaultFailure("\(name)'s bridge did not start: \(CloudHarness.tail(bridge))")
                    }
                }
                var writer = ItemWriter(store: store)
                var fromB: [String: String] = [:]
                func write() throws {
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        try writer.burst(transactions: Int.random(in: 1...10, using: &random), random: &random)
                    }
                }
                func expected() -> [String: String] { writer.expectedRows().merging(fromB) { $1 } }
                var primary = server
                for round in 0..<failovers {
                    let standby = try server.startStandby()
                    standbys.append(standby)
                    try write()
                    _ = try settle(groupA, groupB, server, bridges, expected: expected())
                    try standby.catchUp(with: server)
                    try standby.detach()
                    // Acknowledged by the primary only, and taken in by the other group.
                    try write()
                    let key = "b\(round)"
                    let (status, errors) = try suite.exec(groupB, "b-writer", "INSERT INTO item VALUES ('\(key)', \(round), 'from B')")
                    guard status == 0 else { throw FaultFailure("B's write failed: \(errors)") }
                    fromB[key] = "i:\(round)|t:from B"
                    _ = try settle(groupA, groupB, server, bridges, expected: expected())
                    let resets = bridges.map(Self.restoredCount)
                    let started = Date()
                    try standby.takeOver(from: primary, address: server)
                    primary = standby
                    takeOver.add(Date().timeIntervalSince(started))
                    converged.add(try settle(groupA, groupB, server, bridges, expected: expected()))
                    for (index, bridge) in bridges.enumerated() where Self.restoredCount(bridge) <= resets[index] {
                        throw FaultFailure("failover \(round + 1): \(["A", "B"][index])'s bridge reported no remote restored")
                    }
                    held += 1
                    FileHandle.standardError.write(Data("faults: cloud failover \(round + 1)/\(failovers) held\n".utf8))
                }
                for (name, group) in [("A", groupA), ("B", groupB)] {
                    let status = try harness.status(group)
                    guard status.live, status.pending == 0, status.parked == 0 else {
                        throw FaultFailure(
                            "\(name)'s status at the end: pending \(status.pending), parked \(status.parkedRecords.prefix(3))")
                    }
                }
                let unclean = CloudHarness.terminate(bridges)
                guard unclean.isEmpty else { throw FaultFailure("bridges that did not exit 0 on SIGTERM: \(unclean)") }
                suite.finish(folder: folder, failed: false)
            } catch {
                let kept = suite.finish(folder: folder, failed: true)
                failure = "failover \(held + 1) (seed \(seed)): \(error) [kept in \(kept ?? folder)]"
            }
            let figures = String(
                format:
                    "seed %llu; %ld of %ld failovers held (the bridges never restarted): 0 acknowledged rows lost; takeover median %.2f s, max %.2f s; promotion → A, B and the server converged median %.2f s, max %.2f s",
                seed, held, failovers, takeOver.median, takeOver.max, converged.median, converged.max)
            return Outcome(fault: fault, trials: failovers, passed: failure == nil, figures: failure.map { $0 + ". " + figures } ?? figures)
        }

        /// Sets the server up (`groupstore cloud setup`, the role `trials`, an
        /// authenticator) and starts the gateway; the gateway, its URL and a token file.
        private func prepare(_ server: PostgresServer, in folder: String) throws -> (Subprocess, String, String) {
            let setup = try suite.spawn("groupstore", ["cloud", "setup", "--remote", server.url(user: "postgres")])
            guard setup.waitForExit(timeout: 60) == 0 else { throw FaultFailure("cloud setup failed: \(setup.errors.suffix(3))") }
            try server.createRole(CloudHarness.user)
            try server.psql("GRANT groupstore_user TO \(CloudHarness.user)")
            try server.psql("CREATE ROLE authenticator LOGIN NOINHERIT; GRANT groupstore_gateway, \(CloudHarness.user) TO authenticator")
            let secret = folder + "/jwt.secret"
            try Data("the secret of the failover trial's gateway, 32 bytes and more".utf8).write(to: URL(fileURLWithPath: secret))
            let gateway = try suite.spawn(
                "groupstore",
                ["serve", "--remote", server.url(user: "authenticator"), "--listen", "127.0.0.1:0", "--jwt-secret-file", secret],
                name: "serve")
            let url = gateway.wait(timeout: 60) { _, errors, exit -> String? in
                if exit != nil { return "" }
                return errors.first { $0.hasPrefix("groupstore: serving http") }.map { String($0.split(separator: " ")[2]) }
            }
            guard let url, !url.isEmpty else { throw FaultFailure("the gateway did not start: \(gateway.errors.suffix(3))") }
            let minted = try suite.spawn(
                "groupstore", ["cloud", "token", "--jwt-secret-file", secret, "--role", CloudHarness.user], name: "cloud token")
            guard minted.waitForExit(timeout: 60) == 0, let token = minted.output.first else {
                throw FaultFailure("cloud token failed: \(minted.errors.suffix(3))")
            }
            let tokenFile = folder + "/trials.token"
            try Data(token.utf8).write(to: URL(fileURLWithPath: tokenFile))
            return (gateway, url, tokenFile)
        }

        /// How many times `bridge` reported the remote restored.
        private static func restoredCount(_ bridge: Subprocess) -> Int {
            bridge.output.filter { $0.contains(#""event":"remoteReset""#) && $0.contains("restored") }.count
        }

        /// Waits (bounded) until A and B have nothing pending and both, and the
        /// server, hold `expected`; how long it took.
        private func settle(
            _ groupA: String, _ groupB: String, _ server: PostgresServer, _ bridges: [Subprocess], expected: [String: String]
        ) throws -> TimeInterval {
            let start = Date()
            let keys = expected.keys.sorted().joined(separator: ",")
            while true {
                let (statusA, statusB) = (try harness.status(groupA), try harness.status(groupB))
                let rowsA = try CloudHarness.rows(groupA, "item", columns: ["n", "note"])
                let rowsB = try CloudHarness.rows(groupB, "item", columns: ["n", "note"])
                let onServer = (try? server.psql("SELECT string_agg(id, ',' ORDER BY id) FROM item")) ?? "unreachable"
                if statusA.pending == 0 && statusB.pending == 0 && rowsA == expected && rowsB == expected && onServer == keys {
                    return Date().timeIntervalSince(start)
                }
                if Date().timeIntervalSince(start) > Self.settleBound {
                    let differing = Set(rowsA.keys).union(expected.keys).filter { rowsA[$0] != expected[$0] }.sorted()
                    throw FaultFailure(
                        "\(differing.count) rows of A differ (e.g. \(differing.prefix(3).map { "\($0): wrote \(expected[$0] ?? "deleted"), A \(rowsA[$0] ?? "absent")" })); "
                            + String(format: "not settled after %.0f s: ", Self.settleBound)
                            + "A pending \(statusA.pending) error \(statusA.lastError ?? "none"), A's rows \(rowsA == expected ? "as written" : "NOT as written"); "
                            + "B pending \(statusB.pending) error \(statusB.lastError ?? "none"), B's rows \(rowsB == expected ? "as written" : "NOT as written"); "
                            + "the server's keys \(onServer == keys ? "as written" : "NOT as written"); "
                            + bridges.map(CloudHarness.tail).joined(separator: "; "))
                }
                usleep(100_000)  // a poll of state, bounded above
            }
        }
    }
#endif  // Postgres && Gateway
