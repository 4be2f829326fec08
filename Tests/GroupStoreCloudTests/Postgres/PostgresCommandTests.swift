#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresTestServer
    @testable import GroupStoreCloudPostgres
    import Subprocesses
    import XCTest

    /// `groupstore cloud` against a PostgreSQL server, as a user runs it.
    final class PostgresCommandTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .postgres }

        /// Runs `groupstore arguments…`; its exit status, stdout and stderr.
        private func groupstore(_ arguments: [String]) throws -> (status: Int32?, output: String, errors: String) {
            let process = try Subprocess(Subprocess.productsDirectory.appendingPathComponent("groupstore"), arguments)
            let status = process.waitForExit(timeout: 60)
            return (status, process.output.joined(separator: "\n"), process.errors.joined(separator: "\n"))
        }

        func testSetupIsIdempotent_andSyncUsesTheRole_withOneLineErrors() throws {
            // Set up again (the test's setUp did it once): every migration has run, nothing to do.
            let again = try groupstore(["cloud", "setup", "--remote", server.url(user: "postgres")])
            XCTAssertEqual(again.status, 0, again.errors)
            XCTAssertTrue(again.output.contains("is up to date (format \(PostgresServerSchema.format))"), again.output)

            let group = self.group("a")
            let exec = try groupstore([
                "exec", "--group", group, "--member", "app", "--sql",
                "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT); INSERT INTO note VALUES ('n1', 'from the CLI')",
            ])
            XCTAssertEqual(exec.status, 0, exec.errors)
            let sync = try groupstore(["cloud", "sync", "--group", group, "--remote", server.url(user: "alice"), "--tables", "note"])
            XCTAssertEqual(sync.status, 0, sync.errors)
            XCTAssertTrue(sync.output.contains("uploaded 1"), sync.output)
            XCTAssertEqual(try server.psql("SELECT gs_owner || ':' || title FROM note", as: "alice"), "alice:from the CLI")

            // --user must be the role; a role that does not exist, and a server that is not there, fail at once.
            let wrongUser = try groupstore([
                "cloud", "sync", "--group", group, "--remote", server.url(user: "alice"), "--tables", "note", "--user", "bob",
            ])
            XCTAssertEqual(wrongUser.status, 1)
            XCTAssertTrue(wrongUser.errors.contains("--user bob is not the role alice"), wrongUser.errors)
            let noRole = try groupstore(["cloud", "sync", "--group", group, "--remote", server.url(user: "nobody"), "--tables", "note"])
            XCTAssertEqual(noRole.status, 1)
            XCTAssertTrue(
                noRole.errors.contains("cannot log in to") && noRole.errors.contains("role \"nobody\" does not exist"), noRole.errors)
            let gone = try groupstore([
                "cloud", "sync", "--group", group, "--remote", "postgres://alice@/postgres?host=\(root)/no-server", "--tables", "note",
            ])
            XCTAssertEqual(gone.status, 1)
            XCTAssertTrue(gone.errors.contains("cannot reach postgres://alice@"), gone.errors)
            XCTAssertEqual(gone.errors.split(separator: "\n").count, 1, gone.errors)
            let badMode = try groupstore([
                "cloud", "sync", "--group", group, "--remote", server.url(user: "alice") + "&sslmode=sometimes", "--tables", "note",
            ])
            XCTAssertEqual(badMode.status, 1)
            XCTAssertTrue(badMode.errors.contains("sslmode sometimes is not one of"), badMode.errors)
            // A password never shows in messages.
            let secret = try groupstore([
                "cloud", "sync", "--group", group, "--remote", "postgres://alice:hunter2@/postgres?host=\(root)/no-server", "--tables",
                "note",
            ])
            XCTAssertFalse(secret.errors.contains("hunter2"), secret.errors)
        }

        func testAFormat2Server_isRefusedWithTheCommandToRun_andSetupUpgradesItInPlace() throws {
            let group = self.group("a")
            func sync() throws -> (status: Int32?, output: String, errors: String) {
                try groupstore(["cloud", "sync", "--group", group, "--remote", server.url(user: "alice"), "--tables", "note"])
            }
            let exec = try groupstore([
                "exec", "--group", group, "--member", "app", "--sql",
                "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT); INSERT INTO note VALUES ('n1', 'before the upgrade')",
            ])
            XCTAssertEqual(exec.status, 0, exec.errors)
            let first = try sync()
            XCTAssertEqual(first.status, 0, first.errors)
            // The server as a format-2 build left it: no feed function, no migrations recorded.
            _ = try server.psql(
                "DROP FUNCTION groupstore.feed(text, xid8, bigint, bigint); UPDATE groupstore.meta SET value = '2' WHERE key = 'format'; DROP TABLE groupstore.migrations"
            )
            let refused = try sync()
            XCTAssertEqual(refused.status, 1)
            XCTAssertTrue(refused.errors.contains("format 2") && refused.errors.contains("groupstore cloud setup"), refused.errors)

            let upgrade = try groupstore(["cloud", "setup", "--remote", server.url(user: "postgres")])
            XCTAssertEqual(upgrade.status, 0, upgrade.errors)
            XCTAssertTrue(upgrade.output.contains("upgraded from format 2 to \(PostgresServerSchema.format)"), upgrade.output)
            _ = try server.psql("INSERT INTO note (id, title) VALUES ('n2', 'after the upgrade')", as: "alice")
            let after = try sync()
            XCTAssertEqual(after.status, 0, after.errors)
            XCTAssertTrue(after.output.contains("fetched 1"), after.output)

            // A feed function of another shape (its result columns changed), left by a build that
            // kept no migrations, is replaced, not refused.
            _ = try server.psql(
                """
                DROP TABLE groupstore.migrations;
                DROP FUNCTION groupstore.feed(text, xid8, bigint, bigint);
                CREATE FUNCTION groupstore.feed(p_zone text, p_tx xid8, p_seq bigint, p_limit bigint) RETURNS TABLE (other text) LANGUAGE sql AS 'SELECT 1::text';
                """)
            let again = try groupstore(["cloud", "setup", "--remote", server.url(user: "postgres")])
            XCTAssertEqual(again.status, 0, again.errors)
            _ = try server.psql("INSERT INTO note (id, title) VALUES ('n3', 'after the repair')", as: "alice")
            let repaired = try sync()
            XCTAssertEqual(repaired.status, 0, repaired.errors)
            XCTAssertTrue(repaired.output.contains("fetched 1"), repaired.output)
        }

        func testShareAndSharedTablesFromTheCommandLine() throws {
            var groups: [String: String] = [:]
            for user in ["alice", "bob"] {
                let group = self.group(user)
                groups[user] = group
                let exec = try groupstore([
                    "exec", "--group", group, "--member", "app", "--sql", "CREATE TABLE item(id TEXT PRIMARY KEY, title TEXT)",
                ])
                XCTAssertEqual(exec.status, 0, exec.errors)
            }
            func sync(_ user: String, _ extra: [String] = []) throws -> (status: Int32?, output: String, errors: String) {
                try groupstore(
                    ["cloud", "sync", "--group", groups[user]!, "--remote", server.url(user: user), "--shared-tables", "item"] + extra)
            }
            // The zone is required, and named OWNER/NAME.
            let noZone = try sync("alice")
            XCTAssertEqual(noZone.status, 1)
            XCTAssertTrue(noZone.errors.contains("--shared-tables item needs --shared-zone OWNER/NAME"), noZone.errors)
            for zone in ["alice/no good", "family", "", " alice/family"] {
                let badZone = try sync("alice", ["--shared-zone", zone])
                XCTAssertEqual(badZone.status, 1, zone)
                XCTAssertTrue(badZone.errors.contains("--shared-zone takes OWNER/NAME"), badZone.errors)
                XCTAssertEqual(badZone.errors.split(separator: "\n").count, 1, badZone.errors)
            }
            // A shared table is declared by the schema's owner before users sync it.
            let undeclared = try sync("alice", ["--shared-zone", "alice/family"])
            XCTAssertEqual(undeclared.status, 1, undeclared.output)
            XCTAssertTrue(
                undeclared.errors.contains(
                    "record type item is not declared on this server: a shared table is declared by the schema's owner"),
                undeclared.errors)
            let declared = try groupstore(
                ["cloud", "setup", "--remote", server.url(user: "postgres"), "--group", groups["alice"]!, "--shared-tables", "item"])
            XCTAssertEqual(declared.status, 0, declared.errors)
            XCTAssertEqual(
                declared.output.split(separator: "\n").last.map(String.init), "\(server.url(user: "postgres")): declared item (shared)")
            let noOwner = try sync("alice", ["--shared-zone", "nobody/family"])
            XCTAssertEqual(noOwner.status, 1)
            XCTAssertTrue(noOwner.errors.contains("there is no role \"nobody\""), noOwner.errors)
            let noSuchRole = try groupstore(
                ["cloud", "share", "--remote", server.url(user: "alice"), "--zone", "family", "--with", "bobby", "--access", "read-only"])
            XCTAssertEqual(noSuchRole.status, 1)
            XCTAssertTrue(noSuchRole.errors.contains("there is no such role"), noSuchRole.errors)

            let exec = try groupstore([
                "exec", "--group", groups["alice"]!, "--member", "app", "--sql", "INSERT INTO item VALUES ('a1', 'from alice')",
            ])
            XCTAssertEqual(exec.status, 0, exec.errors)
            let first = try sync("alice", ["--shared-zone", "alice/family"])
            XCTAssertEqual(first.status, 0, first.errors)
            XCTAssertTrue(first.output.contains("uploaded 1"), first.output)

            let share = try groupstore(
                ["cloud", "share", "--remote", server.url(user: "alice"), "--zone", "family", "--with", "bob", "--access", "read-only"])
            XCTAssertEqual(share.status, 0, share.errors)
            XCTAssertEqual(share.output, "shared/alice/family is shared with bob read-only")
            let listed = try groupstore(["cloud", "share", "--remote", server.url(user: "bob")])
            XCTAssertEqual(listed.output, "shared/alice/family bob read-only")
            let badAccess = try groupstore(
                ["cloud", "share", "--remote", server.url(user: "alice"), "--zone", "family", "--with", "bob", "--access", "admin"])
            XCTAssertEqual(badAccess.status, 64)
            XCTAssertTrue(badAccess.errors.contains("unknown --access 'admin'"), badAccess.errors)

            let bobs = try sync("bob", ["--shared-zone", "alice/family"])
            XCTAssertEqual(bobs.status, 0, bobs.errors)
            XCTAssertTrue(bobs.output.contains("fetched 1"), bobs.output)
            let unshare = try groupstore(
                ["cloud", "share", "--remote", server.url(user: "alice"), "--zone", "family", "--with", "bob", "--access", "none"])
            XCTAssertEqual(unshare.output, "shared/alice/family is no longer shared with bob")
            let after = try sync("bob", ["--shared-zone", "alice/family"])
            XCTAssertEqual(after.status, 0, after.errors)
            let rows = try groupstore(["exec", "--group", groups["bob"]!, "--member", "app", "--sql", "SELECT count(*) FROM item"])
            XCTAssertEqual(rows.output.split(separator: "\n").first, "0", rows.output)
        }
    }
#endif  // Postgres
