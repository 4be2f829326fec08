#if Gateway
    import Foundation
    import GRDB
    import GroupStore
    import GroupStoreCloud
    import PostgresTestServer
    import XCTest

    /// Two gateway processes in front of one PostgreSQL server; the bridges of
    /// two groups list both (`http://gw1,gw2`) and sync continuously.
    final class GatewayFailoverTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .gateway }
        static let schema = "CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER)"

        func testAGatewaySIGKILLedWhileBridgesSync_everyChangeArrivesOnce_andNoBridgeRestarts() async throws {
            gateways.append(try GatewayProcess.start(server: server, secret: gatewaySecret))
            let a = try open("a", schema: Self.schema)
            _ = try open("b", schema: Self.schema)
            let watcher = try open("b", member: "watcher")
            let saves = watcher.saves()
            let syncA = CloudSync(try configuration("a", tables: ["item"]))
            let syncB = CloudSync(try configuration("b", tables: ["item"]))
            let bridgeA = Task { try await syncA.run() }
            let bridgeB = Task { try await syncB.run() }
            defer {
                bridgeA.cancel()
                bridgeB.cancel()
            }
            let batches = 20
            let rows = 10
            for batch in 0..<batches {
                try await a.write { db in
                    for row in 0..<rows { try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: ["b\(batch)-\(row)", row]) }
                }
                // The first gateway dies in the middle of the stream, requests and push connections in flight.
                if batch == batches / 2 { gateways[0].kill() }
                // Writes spread over the kill (load shaping, not synchronisation).
                try await Task.sleep(for: .milliseconds(15))
            }
            let expected = batches * rows
            let counts = try await deadline(90, "\(expected) rows in group b") { () -> [String: Int]? in
                var counts: [String: Int] = [:]
                for await save in saves where save.author == "cloud" {
                    guard let change = save.change(of: "item") else { continue }
                    XCTAssertTrue(change.deleted.isEmpty, "no row was deleted: \(change.deleted)")
                    for key in change.inserted + change.updated { counts["\(key)", default: 0] += 1 }
                    if counts.count == expected { return counts }
                }
                return nil
            }
            XCTAssertEqual(counts.count, expected)
            XCTAssertEqual(counts.filter { $0.value != 1 }, [:], "each change arrives once")
            let b = try open("b", member: "reader")
            let stored = try await b.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") }
            XCTAssertEqual(stored, expected)
            // The same bridges, never restarted, still sync: a row written now arrives too.
            let after = watcher.saves()
            try await a.write { db in try db.execute(sql: "INSERT INTO item VALUES ('after', 0)") }
            let arrived = try await deadline(30, "the row written after the kill") { () -> Bool? in
                for await save in after where save.author == "cloud" {
                    if save.change(of: "item")?.inserted.contains(.text("after")) == true { return true }
                }
                return nil
            }
            XCTAssertTrue(arrived)
        }

        /// A PostgreSQL failover under running bridges: a streaming standby,
        /// replication asynchronous, is cut off; both groups write on (each
        /// write acknowledged by the primary and fetched by the other group);
        /// among them a row made again after its delete (the standby has the
        /// delete only); the primary dies and the standby, which never got those commits,
        /// is promoted in its place. The gateway reconnects to the new
        /// primary, the bridges find it went back in time (its history lacks
        /// their marks) and bring it up to date: every group and the server
        /// converge, with nothing acknowledged lost. `GROUPSTORE_FAILOVERS=N`
        /// runs N failovers in a row (the long form; CI runs one).
        func testAPostgreSQLFailoverThatLosesAcknowledgedCommits_losesNothing() async throws {
            let rounds = ProcessInfo.processInfo.environment["GROUPSTORE_FAILOVERS"].flatMap(Int.init) ?? 1
            var standbys: [PostgresServer] = []
            defer { for standby in standbys.reversed() { standby.stop() } }
            let a = try open("a", schema: Self.schema)
            let b = try open("b", schema: Self.schema)
            let (syncA, syncB) = (CloudSync(try configuration("a", tables: ["item"])), CloudSync(try configuration("b", tables: ["item"])))
            let resets = Resets()
            for (index, events) in [syncA.events(), syncB.events()].enumerated() {
                Task { for await event in events { if case .remoteReset(let reset) = event { await resets.add(reset.kind, to: index) } } }
            }
            let bridgeA = Task { try await syncA.run() }
            let bridgeB = Task { try await syncB.run() }
            defer {
                bridgeA.cancel()
                bridgeB.cancel()
            }
            let server = self.server!
            @Sendable func rows(_ store: GroupStore) async throws -> Int {
                try await store.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") ?? -1 }
            }
            func converge(_ count: Int, _ what: String) async throws {
                _ = try await deadline(120, what) { () -> Bool? in
                    while true {
                        let onServer = Int((try? server.psql("SELECT count(*) FROM item")) ?? "") ?? -1
                        if try await rows(a) == count, try await rows(b) == count, onServer == count { return true }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
            }
            func write(_ store: GroupStore, _ prefix: String, _ count: Int) async throws {
                try await store.write { db in
                    for n in 0..<count { try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: ["\(prefix)-\(n)", n]) }
                }
            }

            var primary = server
            var total = 0
            for round in 0..<rounds {
                let standby = try server.startStandby()
                standbys.append(standby)
                try await write(a, "r\(round)-before", 10)
                total += 10
                try await converge(total, "round \(round): the rows written before the standby is cut off, everywhere")
                // A row deleted before the cut-off, and made again after it: the new primary holds its delete only.
                try await write(a, "r\(round)-again", 1)
                try await converge(total + 1, "round \(round): the row made before its delete, everywhere")
                try await a.write { db in try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: ["r\(round)-again-0"]) }
                try await converge(total, "round \(round): its delete, everywhere")
                try standby.catchUp(with: server)
                try standby.detach()

                // Acknowledged by the primary only.
                try await write(a, "r\(round)-a", 10)
                try await write(b, "r\(round)-b", 5)
                try await write(a, "r\(round)-again", 1)
                total += 16
                try await converge(total, "round \(round): the rows written after, everywhere, on the old primary")

                try standby.takeOver(from: primary, address: server)
                primary = standby
                XCTAssertEqual(
                    try server.psql("SELECT current_setting('data_directory') || ' ' || pg_is_in_recovery()"),
                    standby.socketDirectory + "/data false", "round \(round): the URL now reaches the standby, promoted")
                try await converge(total, "round \(round): every row back on the new primary and in both groups")
                for index in 0..<2 {
                    let found = try await deadline(30, "round \(round): group \(["a", "b"][index]) reporting the remote restored") {
                        () -> [CloudRemoteReset.Kind]? in
                        while await resets.kinds[index].count <= round { try await Task.sleep(for: .milliseconds(20)) }
                        return await resets.kinds[index]
                    }
                    XCTAssertEqual(found.last, .restored, "round \(round): the new primary lacked what the group had acknowledged")
                }
                let made = try await a.pool.read {
                    try Int.fetchOne($0, sql: "SELECT count(*) FROM item WHERE id = ?", arguments: ["r\(round)-again-0"])
                }
                XCTAssertEqual(made, 1, "round \(round): the row made again after its delete is kept, not deleted by the older delete")
            }

            // The same bridges, never restarted, sync on.
            try await write(b, "after", 1)
            try await converge(total + 1, "a row written after the failovers, everywhere")
            let keys = try await a.pool.read { try String.fetchAll($0, sql: "SELECT id FROM item ORDER BY id") }
            let keysB = try await b.pool.read { try String.fetchAll($0, sql: "SELECT id FROM item ORDER BY id") }
            XCTAssertEqual(keys, keysB)
            XCTAssertEqual(try server.psql("SELECT count(DISTINCT id) FROM item"), String(total + 1))
        }

        /// The remote resets each group's bridge reported, in order.
        actor Resets {
            var kinds: [[CloudRemoteReset.Kind]] = [[], []]
            func add(_ kind: CloudRemoteReset.Kind, to group: Int) { kinds[group].append(kind) }
        }
    }
#endif  // Gateway
