#if Gateway && Postgres
    import Foundation
    import GRDB
    import GroupStore
    import GroupStoreCloudHTTP
    import GroupStoreCloudPostgres
    import GroupStoreGateway
    import PostgresTestServer
    import XCTest

    @testable import GroupStoreCloud

    /// A fleet's devices on one database role (``GatewayIdentity/device``):
    /// the gateway's login role is granted `groupstore_device` once, and each
    /// device is who its verified token's `sub` says. Through a real gateway
    /// process in front of a real PostgreSQL server.
    final class FleetIdentityTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .gateway }
        static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)"

        override func setUp() async throws {
            try await super.setUp()
            try server.psql("GRANT groupstore_device TO authenticator")
        }

        func deviceToken(_ device: String) throws -> String {
            try GatewayToken.mint(secretFile: gatewaySecret.path, role: TokenVerifier.deviceRole, expiresIn: 3600, device: device)
        }

        func syncDevice(_ name: String, token: String, file: StaticString = #filePath, line: UInt = #line) async throws {
            let summary = try await CloudSync(try configuration(name, tables: ["note"], remote: try gatewayRemote(token: token)))
                .syncOnce(complete: false)
            XCTAssertNil(summary.error, "sync of \(name) failed: \(summary.error ?? "")", file: file, line: line)
        }

        /// Two devices of the one fleet role keep apart what alice and bob,
        /// two roles, keep apart: each its private zone, through the library
        /// and the gateway; and enrolling them changed nothing in the database.
        func testTwoDevicesOfTheFleetRole_cannotReadOrWriteEachOthersPrivateRows() async throws {
            let rolesBefore = try server.psql("SELECT count(*) FROM pg_roles")
            let (one, two) = (try deviceToken("pump-1"), try deviceToken("pump-2"))
            let first = try open("pump-1", schema: Self.schema)
            let second = try open("pump-2", schema: Self.schema)
            try await first.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'secret of pump-1')") }
            try await syncDevice("pump-1", token: one)
            try await second.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'pump-2''s own')") }
            try await syncDevice("pump-2", token: two)
            try await syncDevice("pump-1", token: one)
            XCTAssertEqual(try dump(first, "note"), ["t:n1|t:secret of pump-1"])
            XCTAssertEqual(try dump(second, "note"), ["t:n1|t:pump-2's own"])
            XCTAssertEqual(
                try server.psql("SELECT gs_owner || ' ' || gs_zone || ' ' || gs_edited_by FROM note ORDER BY 1", as: "postgres"),
                "device+pump-1 private/device+pump-1 device+pump-1\ndevice+pump-2 private/device+pump-2 device+pump-2")
            XCTAssertEqual(try server.psql("SELECT count(*) FROM pg_roles"), rolesBefore, "enrolling a device is minting its token")

            // pump-2, through the gateway, may neither read pump-1's zone nor write to it.
            let asTwo = try gatewayRemote(token: two)
            let account = try await asTwo.account()
            XCTAssertEqual(account, "device+pump-2")
            do {
                _ = try await asTwo.fetchChanges(in: .private("device+pump-1"), since: nil, limit: 10)
                XCTFail("pump-2 read pump-1's private zone")
            } catch let error as CloudSyncError where error.code == .permissionDenied {}
            let id = CloudRecordID(zone: .private("device+pump-1"), type: "note", name: "n1")
            let results = try await asTwo.modify([
                .save(id: id, baseTag: nil, fields: ["title": .text("pump-2 was here")], editedAt: Date())
            ])
            guard case .refused = results.first else { return XCTFail("pump-2 wrote to pump-1's zone: \(results)") }
            XCTAssertEqual(try server.psql("SELECT title FROM note WHERE gs_owner = 'device+pump-1'", as: "postgres"), "secret of pump-1")
        }

        /// What a device sends cannot make it another: a token whose `sub` was
        /// changed is refused (its signature), one of the fleet's role naming
        /// no device is refused, and a session of another role that sets the
        /// device setting, or tries to become the fleet's role, is nobody.
        func testAForgedSub_andASessionOfAnotherRole_cannotPassForADevice() async throws {
            let first = try open("pump-1", schema: Self.schema)
            try await first.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'secret of pump-1')") }
            try await syncDevice("pump-1", token: try deviceToken("pump-1"))

            // The token of pump-2 with its sub changed to pump-1, signature kept.
            let parts = try deviceToken("pump-2").split(separator: ".").map(String.init)
            var claims = try XCTUnwrap(
                try JSONSerialization.jsonObject(with: try XCTUnwrap(Self.base64URL(parts[1]))) as? [String: Any])
            claims["sub"] = "pump-1"
            let forged = [parts[0], Self.base64URL(try JSONSerialization.data(withJSONObject: claims)), parts[2]].joined(separator: ".")
            let noDevice = try GatewayToken.mint(secretFile: gatewaySecret.path, role: TokenVerifier.deviceRole)
            for (token, says) in [(forged, "does not match its contents"), (noDevice, "its sub claim names no device")] {
                do {
                    _ = try await gatewayRemote(token: token).account()
                    XCTFail("a token that should be refused was taken (\(says))")
                } catch let error as CloudSyncError {
                    XCTAssertEqual(error.code, .unauthorized)
                    XCTAssertTrue(error.message.contains(says), error.message)
                }
            }

            // alice, a role of her own, sets the device setting: she is still alice.
            XCTAssertEqual(
                try server.psql("SET groupstore.device = 'pump-1'; SELECT count(*) FROM note", as: "alice"), "0",
                "another role's groupstore.device is ignored")
            XCTAssertThrowsError(try server.psql("SET ROLE groupstore_device", as: "alice"), "only the gateway's login may become it")
            // The fleet's role with no device set (a gateway's bug) reads and writes nothing.
            XCTAssertEqual(try server.psql("SET ROLE groupstore_device; SELECT count(*) FROM note", as: "authenticator"), "0")
            XCTAssertThrowsError(
                try server.psql("SET ROLE groupstore_device; INSERT INTO note (id, title) VALUES ('n9', 'nobody')", as: "authenticator"))
        }

        /// A device shares a zone with another device by its user name
        /// (`device+<sub>`), as a role shares with a role.
        func testADevice_sharesAZoneWithAnotherDevice() async throws {
            let schema = "CREATE TABLE item(id TEXT PRIMARY KEY, title TEXT)"
            let zone = CloudZone.shared(owner: "device+pump-1", name: "site7")
            let tokens = ["pump-1": try deviceToken("pump-1"), "pump-2": try deviceToken("pump-2")]
            var stores: [String: GroupStore] = [:]
            func syncShared(_ name: String) async throws {
                try await declareAsOwner(name, publicTables: [], sharedTables: ["item"])
                var configuration = try configuration(name, tables: [], remote: try gatewayRemote(token: try XCTUnwrap(tokens[name])))
                configuration.sharedTables = ["item"]
                configuration.sharedZone = zone
                let summary = try await CloudSync(configuration).syncOnce()
                XCTAssertNil(summary.error, "sync of \(name) failed: \(summary.error ?? "")")
            }
            for name in ["pump-1", "pump-2"] { stores[name] = try open(name, schema: schema) }
            try await XCTUnwrap(stores["pump-1"]).write { db in try db.execute(sql: "INSERT INTO item VALUES ('a1', 'from pump-1')") }
            try await syncShared("pump-1")
            try await gatewayRemote(token: try XCTUnwrap(tokens["pump-1"])).share("site7", with: "device+pump-2", access: .readWrite)
            try await syncShared("pump-2")
            let second = try XCTUnwrap(stores["pump-2"])
            XCTAssertEqual(try dump(second, "item"), ["t:a1|t:from pump-1"])
            try await second.write { db in try db.execute(sql: "UPDATE item SET title = 'edited by pump-2' WHERE id = 'a1'") }
            try await syncShared("pump-2")
            try await syncShared("pump-1")
            XCTAssertEqual(try dump(try XCTUnwrap(stores["pump-1"]), "item"), ["t:a1|t:edited by pump-2"])
            XCTAssertEqual(
                try server.psql("SELECT owner || ' ' || zone || ' ' || member FROM groupstore.shares", as: "postgres"),
                "device+pump-1 site7 device+pump-2")
        }

        /// What a host reports of itself (``CloudHostReport``) is its user's
        /// own entry: another role can neither read nor change nor forge it,
        /// and the schema's owner reads every host (``PostgresRemote/fleet()``).
        func testAHostsReport_isItsUsersOwn_andTheOwnerReadsTheFleet() async throws {
            let first = try open("pump-1", schema: Self.schema)
            try await first.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'from pump-1')") }
            var configuration = try configuration("pump-1", tables: ["note"], remote: try gatewayRemote(token: try deviceToken("pump-1")))
            configuration.hostName = "pump-1.example"
            configuration.appVersion = "3.1"
            let summary = try await CloudSync(configuration).syncOnce(complete: false)
            XCTAssertNil(summary.error)
            _ = try open("alice", schema: Self.schema)
            try await sync("alice", tables: ["note"], remote: try pgRemote(user: "alice"))

            // The gateway keeps its clients' reports together, once a second (``HostReports``).
            let owner = try pgRemote(user: "postgres")
            let fleet = try await deadline(30, "both hosts' reports") { () -> CloudFleet? in
                while true {
                    let fleet = try await owner.fleet()
                    if fleet.hosts.count >= 2 { return fleet }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            let hosts = Dictionary(fleet.hosts.map { ($0.user, $0) }) { first, _ in first }
            XCTAssertEqual(hosts.keys.sorted(), ["alice", "device+pump-1"])
            XCTAssertEqual(hosts["device+pump-1"]?.host, "pump-1.example")
            XCTAssertEqual(hosts["device+pump-1"]?.appVersion, "3.1")
            XCTAssertEqual(hosts["device+pump-1"]?.behind, 0, "its own upload is no change it waits for")
            XCTAssertEqual(hosts["device+pump-1"]?.states(now: fleet.now, silentAfter: 180), ["ok"])

            XCTAssertEqual(try server.psql("SELECT count(*) FROM groupstore.hosts", as: "alice"), "1", "alice sees her own host only")
            XCTAssertEqual(
                try server.psql(
                    "UPDATE groupstore.hosts SET last_error = 'forged' WHERE user_name = 'device+pump-1' RETURNING host", as: "alice"),
                "")
            XCTAssertThrowsError(
                try server.psql("INSERT INTO groupstore.hosts (user_name, host) VALUES ('device+pump-1', 'forged')", as: "alice"))
            XCTAssertEqual(try server.psql("SELECT count(*) FROM groupstore.hosts WHERE last_error IS NOT NULL", as: "postgres"), "0")
        }

        /// A fleet's reports through a gateway are kept together
        /// (``HostReports``): six devices reporting at once cost the database
        /// one transaction (two at a keeping's edge), not one each. And
        /// `groupstore.report_hosts` is for `groupstore_gateway` only, and keeps
        /// a report only for a role its caller's login role may become.
        func testAFleetsReports_areKeptTogether_andOnlyForRolesTheGatewayMayBecome() async throws {
            let devices = (1...6).map { "pump-\($0)" }
            let remotes = try devices.map { try gatewayRemote(token: try deviceToken($0)) }
            let sent = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (device, remote) in zip(devices, remotes) {
                    group.addTask { try await remote.report(CloudHostReport(host: device + ".example", pending: 1)) }
                }
                try await group.waitForAll()
            }
            // Each report is held before it is answered, and the gateway keeps what it holds once
            // a second: reports answered within `took` are kept by at most took/1 s + 2 keepings,
            // however slow the host (one keeping, or two at an edge, on any host but a very busy one).
            let took = ContinuousClock.now - sent
            let server = self.server!
            let kept = try await deadline(30, "the six reports kept") { () -> [[String]]? in
                while true {
                    let rows = try server.psql("SELECT user_name || '|' || seen_at FROM groupstore.hosts ORDER BY 1")
                    let fields = rows.split(separator: "\n").map { $0.split(separator: "|").map(String.init) }
                    if fields.count == devices.count { return fields }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            XCTAssertEqual(kept.map(\.first), devices.map { "device+" + $0 })
            XCTAssertLessThanOrEqual(
                Set(kept.map(\.last)).count, Int(took / .seconds(1)) + 2,
                "one transaction's now() is the seen_at of every report it kept, answered within \(took): \(kept)")

            try server.psql("CREATE ROLE dave; GRANT groupstore_user TO dave")
            let reports =
                #"[{"role": "alice", "host": "a"}, {"role": "dave", "host": "d"}, {"role": "no-such-role", "host": "n"}, "#
                + #"{"role": "device+x", "host": "x"}, {"role": "groupstore_device", "device": "pump-9", "host": "p"}]"#
            XCTAssertEqual(
                try server.psql("SET ROLE groupstore_gateway; SELECT groupstore.report_hosts('\(reports)')", as: "authenticator"), "2",
                "alice's and pump-9's: not dave's (the authenticator may not become dave), nor a role that is none, nor a device's name")
            XCTAssertEqual(
                try server.psql("SELECT user_name || ' ' || host FROM groupstore.hosts WHERE pending = 0 ORDER BY 1"),
                "alice a\ndevice+pump-9 p")
            XCTAssertThrowsError(
                try server.psql("SELECT groupstore.report_hosts('\(reports)')", as: "alice"), "a user cannot report for others")
        }

        /// A gateway stopped gracefully keeps the reports it holds before it
        /// exits (``HostReports``: with an interval of an hour, only the
        /// shutdown keeps this one); a report no remote could keep is refused
        /// at once with its reason, not collected.
        func testAGatewayStoppedGracefully_keepsTheReportsItHolds_andRefusesOnesItCouldNotKeep() async throws {
            let gateway = try GatewayProcess.start(server: server, secret: gatewaySecret, extra: ["--report-interval", "3600"])
            defer { gateway.kill() }
            let remote = try GatewayRemote(
                GatewayRemote.Configuration(url: "http://127.0.0.1:\(gateway.port)", token: try deviceToken("pump-1")))
            try await remote.report(CloudHostReport(host: "pump-1.example", pending: 3))
            XCTAssertEqual(try server.psql("SELECT count(*) FROM groupstore.hosts"), "0", "held until the gateway keeps it")
            let hostile = [
                (CloudHostReport(host: "pump\u{0}1"), "NUL"),
                (CloudHostReport(host: String(repeating: "h", count: 201)), "longer than 200"),
                (CloudHostReport(host: "h", pending: -1), "negative"), (CloudHostReport(host: ""), "no host"),
                (CloudHostReport(host: "h", tokens: ["zone": String(repeating: "t", count: 50_000)]), "tokens are more than"),
            ]
            for (report, reason) in hostile {
                do {
                    try await remote.report(report)
                    XCTFail("a report the gateway cannot keep was taken: \(report)")
                } catch let error as CloudSyncError {
                    XCTAssertTrue(error.message.contains(reason), "\(error.message) names \(reason)")
                }
            }
            gateway.stop()
            XCTAssertEqual(
                try server.psql("SELECT user_name || ' ' || host || ' ' || pending FROM groupstore.hosts"),
                "device+pump-1 pump-1.example 3",
                "kept at the graceful shutdown, and nothing of the refused ones")
        }

        /// What a device sends is anyone's input: a report with a time
        /// PostgreSQL cannot hold is kept without it (the gateway stays up), a
        /// type a device created takes no column another device's group adds
        /// (it is the schema owner's), and a host row a role wrote `infinity`
        /// into reads back as a time the fleet view can print.
        func testHostileDeviceInput_neitherCrashesNorWidens() async throws {
            let one = try gatewayRemote(token: try deviceToken("pump-1"))
            try await one.report(CloudHostReport(host: "h", syncedAt: Date(timeIntervalSince1970: 1e300)))
            let account = try await one.account()
            XCTAssertEqual(account, "device+pump-1", "the gateway answers after the report")
            let server = self.server!
            let kept = try await deadline(30, "the report kept") { () -> String? in
                while true {
                    let row = try server.psql("SELECT host || ' ' || (synced_at IS NULL) FROM groupstore.hosts")
                    if !row.isEmpty { return row }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            XCTAssertEqual(kept, "h true")

            _ = try open("pump-1", schema: Self.schema)
            try await syncDevice("pump-1", token: try deviceToken("pump-1"))
            XCTAssertEqual(try server.psql("SELECT coalesce(creator, 'the owner') FROM groupstore.types WHERE name = 'note'"), "the owner")
            _ = try open("pump-2", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT, extra TEXT)")
            let second = try XCTUnwrap(try? open("pump-2", member: "writer"))
            try await second.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n2', 'from pump-2', 'kept aside')") }
            try await syncDevice("pump-2", token: try deviceToken("pump-2"))
            XCTAssertEqual(
                try server.psql("SELECT count(*) FROM information_schema.columns WHERE table_name = 'note' AND column_name = 'extra'"), "0",
                "another device added no column to a type a device created")
            XCTAssertEqual(try server.psql("SELECT gs_extra -> 'extra' ->> 't' FROM note WHERE id = 'n2'"), "kept aside")

            _ = try open("alice", schema: Self.schema)
            try await sync("alice", tables: ["note"], remote: try pgRemote(user: "alice"))
            try server.psql("UPDATE groupstore.hosts SET seen_at = 'infinity', synced_at = '-infinity'", as: "alice")
            let fleet = try await pgRemote(user: "postgres").fleet()
            let alice = try XCTUnwrap(fleet.hosts.first { $0.user == "alice" })
            XCTAssertTrue(alice.seenAt.timeIntervalSince1970.isFinite && alice.syncedAt == nil, "\(alice)")
            XCTAssertTrue(alice.lag(now: fleet.now).isFinite)
        }

        static func base64URL(_ text: String) -> Data? {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
            return Data(base64Encoded: base64)
        }

        static func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }
#endif  // Gateway && Postgres
