#if Gateway
    import Foundation
    import GRDB
    import PostgresTestServer
    import Subprocesses
    import XCTest

    /// The gateway from the shell: `groupstore serve` in front of a throwaway
    /// PostgreSQL server (logged in as an authenticator role), tokens from
    /// `groupstore cloud token`, and bridges that reach it with
    /// `--remote http://HOST:PORT --token-file FILE`.
    final class GatewayProcessTests: ProcessTestCase {
        var server: PostgresServer!
        var root: String { group }
        var secret: String { root + "/jwt.secret" }

        override func setUp() async throws {
            try await super.setUp()
            do {
                server = try PostgresServer.start()
            } catch let error as PostgresServerError where error.notInstalled && ProcessInfo.processInfo.environment["CI"] != "true" {
                throw XCTSkip(error.description)
            }
        }

        override func tearDown() async throws {
            server?.stop()
            try await super.tearDown()
        }

        override func setUpWithError() throws {
            try super.setUpWithError()
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try Data("a secret of more than thirty-two bytes, for the tests".utf8).write(to: URL(fileURLWithPath: secret))
        }

        /// Sets the server up, with `alice` and `bob` and an authenticator granted only `alice`.
        func prepareServer() throws {
            let setup = try spawn("groupstore", ["cloud", "setup", "--remote", server.url(user: "postgres")], name: "cloud setup")
            XCTAssertEqual(try setup.waitForExit(), 0, "\(setup.errors)")
            for role in ["alice", "bob"] {
                try server.createRole(role)
                try server.psql("GRANT groupstore_user TO \(role)")
            }
            try server.psql("CREATE ROLE authenticator LOGIN NOINHERIT; GRANT groupstore_gateway, alice TO authenticator")
        }

        /// `groupstore serve`, once it listens; its URL.
        func serve(extra: [String] = []) throws -> (ChildProcess, String) {
            let child = try spawn(
                "groupstore",
                [
                    "serve", "--remote", server.url(user: "authenticator"), "--listen", "127.0.0.1:0", "--jwt-secret-file", secret,
                    "--pool", "3",
                ]
                    + extra,
                name: "serve")
            let line = try child.wait("the serving line", timeout: 60) { _, errors, _ in
                errors.first { $0.hasPrefix("groupstore: serving http") }
            }
            return (child, String(line.split(separator: " ")[2]))
        }

        /// `groupstore cloud token`'s token for `role`, written to a file; the file.
        func tokenFile(_ role: String, extra: [String] = [], secret: String? = nil, name: String? = nil) throws -> String {
            let child = try spawn(
                "groupstore",
                ["cloud", "token", "--jwt-secret-file", secret ?? self.secret] + (role.isEmpty ? [] : ["--role", role]) + extra,
                name: "cloud token")
            XCTAssertEqual(try child.waitForExit(), 0, "\(child.errors)")
            XCTAssertEqual(child.output.count, 1)
            let path = root + "/" + (name ?? role) + ".token"
            try Data((child.output.first ?? "").utf8).write(to: URL(fileURLWithPath: path))
            return path
        }

        func exec(in group: String, _ sql: String) throws {
            let child = try spawn("groupstore", ["exec", "--group", group, "--member", "setup", "--sql", sql], name: "exec")
            XCTAssertEqual(try child.waitForExit(), 0, "\(child.errors)")
        }

        func cloudSync(_ group: String, url: String, token: String, extra: [String] = []) throws -> ChildProcess {
            let child = try spawn(
                "groupstore", ["cloud", "sync", "--group", group, "--remote", url, "--tables", "note", "--token-file", token] + extra,
                name: "cloud sync")
            try child.waitForExit(timeout: 60)
            return child
        }

        func testTwoGroupsSyncThroughServe_withTokensFromCloudToken_andServeExits0OnSIGTERM() throws {
            try prepareServer()
            let (gateway, url) = try serve()
            let token = try tokenFile("alice", extra: ["--expires-in", "600"])
            for name in ["A", "B"] { try exec(in: root + "/" + name, "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)") }
            try exec(in: root + "/A", "INSERT INTO note VALUES ('n1', 'through the gateway')")
            let up = try cloudSync(root + "/A", url: url, token: token)
            XCTAssertEqual(up.process.status, 0, "\(up.errors)")
            let down = try cloudSync(root + "/B", url: url, token: token)
            XCTAssertEqual(down.process.status, 0, "\(down.errors)")
            var configuration = Configuration()
            configuration.readonly = true
            let b = try DatabaseQueue(path: root + "/B/store.sqlite", configuration: configuration)
            XCTAssertEqual(try b.read { try String.fetchAll($0, sql: "SELECT body FROM note") }, ["through the gateway"])
            XCTAssertEqual(try server.psql("SELECT gs_owner || ':' || body FROM note"), "alice:through the gateway")
            gateway.send(SIGTERM)
            XCTAssertEqual(try gateway.waitForExit(timeout: 20), 0, "\(gateway.errors)")
        }

        /// `cloud token --claim site=7` mints a device's token; through
        /// `serve`, `cloud sync --where "note: site = claim('site')"` syncs that
        /// site's rows, whatever `--param` the device gives; a claim that is
        /// one of the token's own is refused in one line.
        func testADeviceTokensClaim_choosesTheRowsItSyncs_throughServe() throws {
            try prepareServer()
            let (_, url) = try serve()
            let owner = try tokenFile("alice")
            let device = try tokenFile("alice", extra: ["--claim", "site=7"], name: "device")
            for name in ["A", "B"] { try exec(in: root + "/" + name, "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT, site INTEGER)") }
            try exec(in: root + "/A", "INSERT INTO note VALUES ('n1', 'site seven', 7), ('n2', 'site eight', 8)")
            let up = try cloudSync(root + "/A", url: url, token: owner)
            XCTAssertEqual(up.process.status, 0, "\(up.errors)")
            let down = try cloudSync(
                root + "/B", url: url, token: device, extra: ["--where", "note: site = claim('site')", "--param", "site=8"])
            XCTAssertEqual(down.process.status, 0, "\(down.errors)")
            var configuration = Configuration()
            configuration.readonly = true
            let b = try DatabaseQueue(path: root + "/B/store.sqlite", configuration: configuration)
            XCTAssertEqual(try b.read { try String.fetchAll($0, sql: "SELECT id FROM note") }, ["n1"], "the token's site, not --param's")

            // A token minted with --where restricts: the device asking for every row reads its site's.
            let restricted = try tokenFile(
                "alice", extra: ["--claim", "site=8", "--where", "note: site = claim('site')"], name: "restricted")
            try exec(in: root + "/C", "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT, site INTEGER)")
            let wide = try cloudSync(root + "/C", url: url, token: restricted, extra: ["--where", "note: TRUE"])
            XCTAssertEqual(wide.process.status, 0, "\(wide.errors)")
            let c = try DatabaseQueue(path: root + "/C/store.sqlite", configuration: configuration)
            XCTAssertEqual(
                try c.read { try String.fetchAll($0, sql: "SELECT id FROM note") }, ["n2"], "the token's --where, not the device's")

            let refused = try spawn(
                "groupstore", ["cloud", "token", "--jwt-secret-file", secret, "--role", "alice", "--claim", "role=postgres"],
                name: "cloud token")
            XCTAssertEqual(try refused.waitForExit(), 1)
            XCTAssertEqual(refused.errors.filter { !$0.isEmpty }.count, 1, "\(refused.errors)")
            XCTAssertTrue(refused.errors.joined().contains("the claim role is the token's own"), "\(refused.errors)")
        }

        /// A fleet: the authenticator is granted `groupstore_device` once;
        /// then a device is enrolled by `cloud token --device` alone, syncs
        /// through `serve`, and owns its rows as `device+NAME`.
        func testADeviceEnrolledByMintingItsToken_syncsAsItself_throughServe() throws {
            try prepareServer()
            try server.psql("GRANT groupstore_device TO authenticator")
            let (_, url) = try serve()
            let rolesBefore = try server.psql("SELECT count(*) FROM pg_roles")
            let token = try tokenFile("", extra: ["--device", "pump-7"], name: "pump-7")
            try exec(in: root + "/A", "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT, site INTEGER)")
            try exec(in: root + "/A", "INSERT INTO note VALUES ('n1', 'from pump-7', 7)")
            let sync = try cloudSync(root + "/A", url: url, token: token)
            XCTAssertEqual(sync.process.status, 0, "\(sync.errors)")
            XCTAssertEqual(
                try server.psql("SELECT gs_owner || ' ' || gs_zone || ' ' || body FROM note"),
                "device+pump-7 private/device+pump-7 from pump-7")
            XCTAssertEqual(try server.psql("SELECT count(*) FROM pg_roles"), rolesBefore)

            let both = try spawn(
                "groupstore", ["cloud", "token", "--jwt-secret-file", secret, "--role", "alice", "--device", "pump-8"], name: "cloud token")
            XCTAssertEqual(try both.waitForExit(), 64, "a usage error")
            XCTAssertTrue(both.errors.joined().contains("give one of --role and --device"), "\(both.errors)")
            let bad = try spawn("groupstore", ["cloud", "token", "--jwt-secret-file", secret, "--device", "pump 8"], name: "cloud token")
            XCTAssertEqual(try bad.waitForExit(), 1)
            XCTAssertTrue(bad.errors.joined().contains("not \"pump 8\""), "\(bad.errors)")
        }

        /// `cloud fleet` from outside, on a fleet of four devices through
        /// `serve`: one stopped (silent), one with a parked record (its edit
        /// of another device's public row is refused), one behind (a change
        /// it has not fetched), one up to date; each is listed, and its state
        /// says which, as a table and as JSON.
        func testCloudFleet_showsAStoppedDevice_aParkedRecord_andADeviceBehind() throws {
            try prepareServer()
            try server.psql("GRANT groupstore_device TO authenticator")
            let (_, url) = try serve()
            let owner = server.url(user: "postgres")
            var tokens: [String: String] = [:]
            for name in ["a", "b", "c", "d"] {
                tokens[name] = try tokenFile("", extra: ["--device", "pump-" + name], name: "pump-" + name)
                try exec(in: root + "/" + name, "CREATE TABLE board(id TEXT PRIMARY KEY, body TEXT)")
            }
            let declare = try spawn(
                "groupstore", ["cloud", "setup", "--remote", owner, "--group", root + "/a", "--public-tables", "board"], name: "cloud setup"
            )
            XCTAssertEqual(try declare.waitForExit(timeout: 60), 0, "\(declare.errors)")
            func sync(_ name: String) throws {
                let child = try spawn(
                    "groupstore",
                    [
                        "cloud", "sync", "--group", root + "/" + name, "--remote", url, "--public-tables", "board", "--token-file",
                        tokens[name] ?? "", "--app-version", "2.4." + name, "--report-every", "1",
                    ], name: "cloud sync " + name)
                XCTAssertEqual(try child.waitForExit(timeout: 60), 0, "\(child.errors)")
            }
            func fleet(_ format: String) throws -> [String] {
                let child = try spawn(
                    "groupstore", ["cloud", "fleet", "--remote", owner, "--silent-after", "8", "--format", format], name: "cloud fleet")
                XCTAssertEqual(try child.waitForExit(timeout: 60), 0, "\(child.errors)")
                return child.output
            }
            func hosts() throws -> [String: [String: Any]] {
                let object = try JSONSerialization.jsonObject(with: Data((try fleet("json").first ?? "").utf8)) as? [String: Any]
                var byUser: [String: [String: Any]] = [:]
                for host in object?["hosts"] as? [[String: Any]] ?? [] { byUser[host["user"] as? String ?? ""] = host }
                return byUser
            }

            // pump-d syncs once and stops; the others start once it has been silent for 8 s.
            try sync("d")
            let deadline = Date().addingTimeInterval(60)
            while (try hosts()["device+pump-d"]?["secondsSinceSeen"] as? Double ?? 0) < 9 {
                XCTAssertLessThan(Date(), deadline, "pump-d's report never aged past 9 s")
                if Date() > deadline { return }
                Thread.sleep(forTimeInterval: 0.5)
            }
            try exec(in: root + "/a", "INSERT INTO board VALUES ('b1', 'from pump-a')")
            try sync("a")
            try sync("b")
            try exec(in: root + "/b", "UPDATE board SET body = 'pump-b was here' WHERE id = 'b1'")
            try sync("b")
            try sync("c")
            try exec(in: root + "/a", "INSERT INTO board VALUES ('b2', 'pump-c has not fetched this')")
            try sync("a")

            // The gateway keeps its clients' reports together, once a second: pump-c's is there within one.
            var seen = try hosts()
            let kept = Date().addingTimeInterval(30)
            while seen.count < 4, Date() < kept {
                Thread.sleep(forTimeInterval: 0.2)
                seen = try hosts()
            }
            XCTAssertEqual(seen.keys.sorted(), ["device+pump-a", "device+pump-b", "device+pump-c", "device+pump-d"])
            XCTAssertEqual(seen["device+pump-a"]?["states"] as? [String], ["ok"], "\(seen)")
            XCTAssertEqual(seen["device+pump-b"]?["states"] as? [String], ["parked", "behind"], "\(seen)")
            XCTAssertEqual(seen["device+pump-b"]?["parked"] as? Int, 1)
            XCTAssertEqual(seen["device+pump-c"]?["states"] as? [String], ["behind"], "\(seen)")
            XCTAssertEqual(seen["device+pump-c"]?["behind"] as? Int, 1)
            XCTAssertEqual(seen["device+pump-d"]?["states"] as? [String], ["silent", "behind"], "\(seen)")
            XCTAssertEqual(seen["device+pump-d"]?["behind"] as? Int, 2)
            XCTAssertEqual(seen["device+pump-c"]?["appVersion"] as? String, "2.4.c")

            let table = try fleet("text")
            XCTAssertEqual(table.count, 5, "a header and a line a device: \(table)")
            XCTAssertTrue(table.first?.hasPrefix("USER") == true, "\(table)")
            XCTAssertTrue(table.contains { $0.hasPrefix("device+pump-d") && $0.contains("silent,behind") }, "\(table)")
            let notPostgres = try spawn("groupstore", ["cloud", "fleet", "--remote", url], name: "cloud fleet")
            XCTAssertEqual(try notPostgres.waitForExit(), 1)
            XCTAssertTrue(notPostgres.errors.joined().contains("give its postgres:// URL"), "\(notPostgres.errors)")
        }

        func testOverTLS_withTheCertificateAndKeyGiven_aBridgeThatTrustsTheCASyncs_andOneThatDoesNotIsRefused() throws {
            try prepareServer()
            let (certificate, key) = (root + "/cert.pem", root + "/key.pem")
            let openssl = try spawn(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate,
                ], name: "openssl")
            XCTAssertEqual(try openssl.waitForExit(), 0, "\(openssl.errors)")
            let (_, url) = try serve(extra: ["--tls-cert", certificate, "--tls-key", key])
            XCTAssertTrue(url.hasPrefix("https://127.0.0.1:"), url)
            let token = try tokenFile("alice")
            try exec(in: root + "/A", "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)")
            try exec(in: root + "/A", "INSERT INTO note VALUES ('n1', 'over TLS')")
            let untrusted = try cloudSync(root + "/A", url: url, token: token)
            XCTAssertEqual(untrusted.process.status, 1, "a certificate nobody vouches for is refused")
            let trusted = try cloudSync(root + "/A", url: url, token: token, extra: ["--tls-ca", certificate])
            XCTAssertEqual(trusted.process.status, 0, "\(trusted.errors)")
            XCTAssertEqual(try server.psql("SELECT body FROM note"), "over TLS")
        }

        func testABadToken_failsCloudSyncWithOneLine_andCloudRunReportsItAndTakesARenewedToken() throws {
            try prepareServer()
            let (_, url) = try serve()
            try Data("another secret of more than thirty-two bytes".utf8).write(to: URL(fileURLWithPath: root + "/other.secret"))
            try exec(in: root + "/A", "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)")
            let cases: [(file: String, says: String)] = [
                (try tokenFile("alice", secret: root + "/other.secret", name: "foreign"), "signed with a key this gateway does not have"),
                (try tokenFile("bob"), "the gateway may not act as role \"bob\""),
            ]
            for (file, says) in cases {
                let sync = try cloudSync(root + "/A", url: url, token: file)
                XCTAssertEqual(sync.process.status, 1)
                XCTAssertEqual(sync.errors.count, 1, "one line: \(sync.errors)")
                XCTAssertTrue(sync.errors.first?.contains(says) == true, "\(sync.errors)")
            }
            let missing = try spawn(
                "groupstore", ["cloud", "sync", "--group", root + "/A", "--remote", url, "--tables", "note"], name: "sync")
            XCTAssertEqual(try missing.waitForExit(), 1)
            XCTAssertTrue(missing.errors.first?.contains("needs a token") == true, "\(missing.errors)")
            // cloud run: reports the refusal, keeps trying, and takes the renewed token from its file.
            let file = root + "/run.token"
            try FileManager.default.copyItem(atPath: cases[0].file, toPath: file)
            try exec(in: root + "/A", "INSERT INTO note VALUES ('n1', 'waits for a token')")
            let run = try spawn(
                "groupstore",
                ["cloud", "run", "--group", root + "/A", "--remote", url, "--tables", "note", "--token-file", file, "--format", "jsonl"],
                name: "cloud run")
            try run.wait("a failed sync reported", timeout: 60) { output, _, _ in
                output.first { $0.contains("\"finished\"") && $0.contains("signed with a key this gateway does not have") }
            }
            try Data((try String(contentsOfFile: try tokenFile("alice", name: "renewed"), encoding: .utf8)).utf8).write(
                to: URL(fileURLWithPath: file))
            let uploaded = try run.wait("the record uploaded with the renewed token", timeout: 60) { output, _, exit -> Bool? in
                if exit != nil { return false }
                return output.contains { $0.contains("\"event\":\"uploaded\"") } ? true : nil
            }
            XCTAssertTrue(uploaded, "cloud run exited: \(run.errors.suffix(3))")
            XCTAssertEqual(try server.psql("SELECT body FROM note"), "waits for a token")
            XCTAssertNil(run.process.status, "cloud run kept running: \(run.errors.suffix(3))")
        }
    }
#endif  // Gateway
