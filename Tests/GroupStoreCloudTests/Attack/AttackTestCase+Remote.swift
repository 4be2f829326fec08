import Foundation
import Subprocesses
import XCTest

#if Postgres
    import PostgresTestServer
#endif

/// What an administrator does to a remote under running bridges: replace it
/// with a fresh one, copy it, and restore it from that older copy.
extension AttackTestCase {
    /// Replaces the remote by a fresh one, as an administrator would: the
    /// embedded file and its `-wal`/`-shm` deleted, or the PostgreSQL database
    /// dropped and created again; then `cloud setup`.
    func replaceRemote(file: StaticString = #filePath, line: UInt = #line) throws {
        #if Postgres
            if Self.remoteKind == .postgres {
                try server.psql("DROP DATABASE \(Self.database) WITH (FORCE)")
                try server.psql("CREATE DATABASE \(Self.database)")
                try setUpRemote(file: file, line: line)
                return
            }
        #endif
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: remotePath + suffix) }
        try setUpRemote(file: file, line: line)
    }

    /// Where ``backUpRemote()`` keeps its copy.
    var remoteCopy: String { root + "/remote-copy" }

    /// Copies the remote as it is now: `sqlite3 .backup`, or `pg_dump`.
    func backUpRemote(file: StaticString = #filePath, line: UInt = #line) throws {
        #if Postgres
            if Self.remoteKind == .postgres {
                try tool(
                    server.binDirectory + "/pg_dump", postgresArguments + ["-Fc", "-f", remoteCopy, Self.database], file: file, line: line)
                return
            }
        #endif
        try tool("/usr/bin/sqlite3", [remotePath, ".timeout 10000", ".backup '\(remoteCopy)'"], file: file, line: line)
    }

    /// Restores the remote from the copy ``backUpRemote()`` made, in place
    /// (`sqlite3 .restore`, through SQLite's locks), or the PostgreSQL
    /// database dropped and restored from the dump (`pg_restore`).
    func restoreRemote(file: StaticString = #filePath, line: UInt = #line) throws {
        #if Postgres
            if Self.remoteKind == .postgres {
                try server.psql("DROP DATABASE \(Self.database) WITH (FORCE)")
                try server.psql("CREATE DATABASE \(Self.database)")
                try tool(
                    server.binDirectory + "/pg_restore", postgresArguments + ["-d", Self.database, remoteCopy], file: file, line: line)
                return
            }
        #endif
        try tool("/usr/bin/sqlite3", [remotePath, ".timeout 10000", ".restore '\(remoteCopy)'"], file: file, line: line)
    }

    #if Postgres
        /// How `pg_dump` and `pg_restore` reach the test's server, as its superuser.
        private var postgresArguments: [String] { ["-h", server.socketDirectory, "-p", "\(server.port)", "-U", "postgres"] }
    #endif

    /// Runs a program to its end; fails the test if it fails.
    private func tool(_ path: String, _ arguments: [String], file: StaticString, line: UInt) throws {
        let child = try Subprocess(URL(fileURLWithPath: path), arguments)
        let status = child.waitForExit(timeout: 120)
        XCTAssertEqual(status, 0, "\(path) \(arguments.joined(separator: " ")): \(child.errors)", file: file, line: line)
    }
}
