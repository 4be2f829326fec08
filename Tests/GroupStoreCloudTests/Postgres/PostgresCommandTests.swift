import Foundation
import GroupStoreCloud
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
        // Set up again (the test's setUp did it once): nothing to create, the functions refreshed.
        let again = try groupstore(["cloud", "setup", "--remote", server.url(user: "postgres")])
        XCTAssertEqual(again.status, 0, again.errors)
        XCTAssertTrue(again.output.contains("is up to date (format 1)"), again.output)

        let group = self.group("a")
        let exec = try groupstore(["exec", "--group", group, "--member", "app", "--sql",
                                   "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT); INSERT INTO note VALUES ('n1', 'from the CLI')"])
        XCTAssertEqual(exec.status, 0, exec.errors)
        let sync = try groupstore(["cloud", "sync", "--group", group, "--remote", server.url(user: "alice"), "--tables", "note"])
        XCTAssertEqual(sync.status, 0, sync.errors)
        XCTAssertTrue(sync.output.contains("uploaded 1"), sync.output)
        XCTAssertEqual(try server.psql("SELECT gs_owner || ':' || title FROM note", as: "alice"), "alice:from the CLI")

        // --user must be the role; a role that does not exist, and a server that is not there, fail at once.
        let wrongUser = try groupstore(["cloud", "sync", "--group", group, "--remote", server.url(user: "alice"), "--tables", "note", "--user", "bob"])
        XCTAssertEqual(wrongUser.status, 1)
        XCTAssertTrue(wrongUser.errors.contains("--user bob is not the role alice"), wrongUser.errors)
        let noRole = try groupstore(["cloud", "sync", "--group", group, "--remote", server.url(user: "nobody"), "--tables", "note"])
        XCTAssertEqual(noRole.status, 1)
        XCTAssertTrue(noRole.errors.contains("cannot log in to") && noRole.errors.contains("role \"nobody\" does not exist"), noRole.errors)
        let gone = try groupstore(["cloud", "sync", "--group", group, "--remote", "postgres://alice@/postgres?host=\(root)/no-server", "--tables", "note"])
        XCTAssertEqual(gone.status, 1)
        XCTAssertTrue(gone.errors.contains("cannot reach postgres://alice@"), gone.errors)
        XCTAssertEqual(gone.errors.split(separator: "\n").count, 1, gone.errors)
        let badMode = try groupstore(["cloud", "sync", "--group", group, "--remote", server.url(user: "alice") + "&sslmode=sometimes", "--tables", "note"])
        XCTAssertEqual(badMode.status, 1)
        XCTAssertTrue(badMode.errors.contains("sslmode sometimes is not one of"), badMode.errors)
        // A password never shows in messages.
        let secret = try groupstore(["cloud", "sync", "--group", group, "--remote", "postgres://alice:hunter2@/postgres?host=\(root)/no-server", "--tables", "note"])
        XCTAssertFalse(secret.errors.contains("hunter2"), secret.errors)
    }
}
