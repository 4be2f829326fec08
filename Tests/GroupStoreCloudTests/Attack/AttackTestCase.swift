import Foundation
import GRDB
import GroupStoreCloud
import Subprocesses
import XCTest

#if Postgres
    import PostgresTestServer
#endif

/// Base of the tests written from the attack on the bridge (issue 30): each
/// drives the built `groupstore` as separate processes — `exec`, `cloud
/// sync`, `cloud run`, `cloud status`, `cloud setup` — against the remote of
/// the class's kind: the embedded remote here, PostgreSQL in a subclass
/// (in a database of its own, `app`, so that it can be dropped, set up
/// again and restored from a dump).
class AttackTestCase: CloudTestCase {
    override class var remoteKind: RemoteKind { .embedded }
    /// The PostgreSQL database the remote lives in.
    static let database = "app"
    private var children: [Subprocess] = []

    override func setUp() async throws {
        try await super.setUp()
        #if Postgres
            if Self.remoteKind == .postgres {
                try server.psql("CREATE DATABASE \(Self.database)")
                try setUpRemote()
            }
        #endif
    }

    override func tearDown() async throws {
        for child in children { child.stop() }
        children = []
        try await super.tearDown()
    }

    /// What a finished `groupstore` printed.
    struct Run {
        var status: Int32?
        var output: [String]
        var errors: [String]
        var text: String { (output + errors).joined(separator: "\n") }
    }

    /// Starts `groupstore arguments…` (with `environment` added), not waited for.
    func start(_ arguments: [String], environment: [String: String] = [:], name: String? = nil) throws -> Subprocess {
        let groupstore = Subprocess.productsDirectory.appendingPathComponent("groupstore")
        let child: Subprocess
        if environment.isEmpty {
            child = try Subprocess(groupstore, arguments, name: name)
        } else {
            let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            child = try Subprocess(URL(fileURLWithPath: "/usr/bin/env"), assignments + [groupstore.path] + arguments, name: name)
        }
        children.append(child)
        return child
    }

    /// Runs `groupstore arguments…` to its end.
    @discardableResult
    func groupstore(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120) throws -> Run {
        let child = try start(arguments, environment: environment)
        let status = child.waitForExit(timeout: timeout)
        return Run(status: status, output: child.output, errors: child.errors)
    }

    /// The `--remote` of `user`: the embedded remote's file, or a URL logging in as `user`.
    func remote(_ user: String = "alice") -> String {
        #if Postgres
            if Self.remoteKind == .postgres { return server.url(user: user, database: Self.database) }
        #endif
        return remotePath
    }

    /// `cloud setup` of the remote (as the schema's owner on PostgreSQL).
    func setUpRemote(file: StaticString = #filePath, line: UInt = #line) throws {
        let run = try groupstore(["cloud", "setup", "--remote", remote("postgres")])
        XCTAssertEqual(run.status, 0, "cloud setup: \(run.text)", file: file, line: line)
    }

    /// The arguments of `groupstore cloud COMMAND` for `group` as `user`.
    func cloud(_ command: String, _ group: String, tables: String = "note", user: String = "alice", extra: [String] = []) -> [String] {
        var arguments = ["cloud", command, "--group", self.group(group), "--remote", remote(user), "--tables", tables]
        if Self.remoteKind != .postgres { arguments += ["--user", user] }
        return arguments + extra
    }

    /// `groupstore exec` in group `name`; asserts success.
    func exec(_ name: String, _ sql: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let run = try groupstore(["exec", "--group", group(name), "--member", "app", "--sql", sql])
        XCTAssertEqual(run.status, 0, "exec in \(name) failed: \(run.text)", file: file, line: line)
    }

    /// `groupstore cloud sync`; asserts success.
    @discardableResult
    func cloudSync(
        _ name: String, tables: String = "note", user: String = "alice", extra: [String] = [], environment: [String: String] = [:],
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> Run {
        let run = try groupstore(cloud("sync", name, tables: tables, user: user, extra: extra), environment: environment)
        XCTAssertEqual(run.status, 0, "cloud sync of \(name) failed: \(run.text)", file: file, line: line)
        return run
    }

    /// `groupstore cloud run --format jsonl`, once it syncs.
    func cloudRun(
        _ name: String, tables: String = "note", user: String = "alice", extra: [String] = [], file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> Subprocess {
        let child = try start(
            cloud("run", name, tables: tables, user: user, extra: ["--format", "jsonl"] + extra), name: "cloud run \(name)")
        guard child.waitForError(containing: "groupstore: syncing", timeout: 60) else {
            XCTFail("cloud run of \(name) did not start: \(child.errors.suffix(5))", file: file, line: line)
            throw CancellationError()
        }
        return child
    }

    /// The first jsonl event of `child` after line `from` that satisfies `predicate` (bounded wait).
    @discardableResult
    func event(
        _ child: Subprocess, _ what: String, after from: Int = 0, timeout: TimeInterval = 60, file: StaticString = #filePath,
        line: UInt = #line, where predicate: @escaping ([String: Any]) -> Bool
    ) throws -> [String: Any] {
        let found = child.wait(timeout: timeout) { lines, _, _ in
            lines.dropFirst(from).lazy.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first(where: predicate)
        }
        guard let found else {
            XCTFail(
                "\(child.name): no event '\(what)' within \(timeout) s; last events \(child.output.suffix(6)); stderr \(child.errors.suffix(4))",
                file: file, line: line)
            throw CancellationError()
        }
        return found
    }

    /// Waits until `condition` holds (checked every 50 ms), failing after `timeout`.
    func eventually(
        _ what: String, timeout: TimeInterval = 60, file: StaticString = #filePath, line: UInt = #line, _ condition: () throws -> Bool
    ) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while try !condition() {
            guard Date() < deadline else {
                XCTFail("timed out after \(timeout) s waiting for \(what)", file: file, line: line)
                throw CancellationError()
            }
            usleep(50_000)  // polls files written by other processes: no event to await
        }
    }

    /// The rows `sql` selects in group `name`, each as its columns joined by `|` (NULL as `NULL`).
    func rows(_ name: String, _ sql: String) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        return try DatabaseQueue(path: group(name) + "/store.sqlite", configuration: configuration).read { db in
            try Row.fetchAll(db, sql: sql).map { row in
                row.databaseValues.map { value in String.fromDatabaseValue(value) ?? (value.isNull ? "NULL" : "\(value)") }
                    .joined(separator: "|")
            }
        }
    }

    /// `groupstore cloud status --format json` of group `name`.
    func cloudStatus(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let run = try groupstore(["cloud", "status", "--group", group(name), "--format", "json"])
        XCTAssertEqual(run.status, 0, run.text, file: file, line: line)
        return (try? JSONSerialization.jsonObject(with: Data((run.output.first ?? "").utf8)) as? [String: Any]) ?? [:]
    }

    /// The live records of the record type whose name is `type` ignoring case, by record name (sorted).
    func remoteNames(_ type: String) throws -> [String] {
        #if Postgres
            if Self.remoteKind == .postgres {
                let tables = try server.psql(
                    "SELECT name FROM groupstore.types WHERE lower(name) = lower('\(type)')", database: Self.database)
                return try tables.split(separator: "\n").flatMap { table in
                    try server.psql("SELECT gs_name FROM public.\"\(table)\"", database: Self.database).split(separator: "\n").map(
                        String.init)
                }.sorted()
            }
        #endif
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        return try DatabaseQueue(path: remotePath, configuration: configuration).read { db in
            try String.fetchAll(
                db, sql: "SELECT name FROM records WHERE lower(type) = lower(?) AND deleted = 0 ORDER BY name", arguments: [type])
        }
    }

    /// The record types on the remote.
    func remoteTypes() throws -> [String] {
        #if Postgres
            if Self.remoteKind == .postgres {
                return try server.psql("SELECT name FROM groupstore.types ORDER BY name", database: Self.database).split(separator: "\n")
                    .map(String.init)
            }
        #endif
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: remotePath, configuration: configuration).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM types ORDER BY name")
        }
    }

    /// The text fields of the live record `name` of record type `type` on the
    /// remote, by column (NULLs and the key column `id` left out): on
    /// PostgreSQL its typed table's columns and what it keeps in `gs_extra`.
    func remoteFields(_ type: String, _ name: String) throws -> [String: String] {
        func texts(_ fields: [String: Any]) -> [String: String] {
            fields.compactMapValues { ($0 as? [String: Any])?["t"] as? String }
        }
        #if Postgres
            if Self.remoteKind == .postgres {
                let json = try server.psql(
                    "SELECT row_to_json(t)::text FROM public.\"\(type)\" AS t WHERE gs_name = '\(name)'", database: Self.database)
                let row = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
                var fields = row.filter { !$0.key.hasPrefix("gs_") && $0.key != "id" }.compactMapValues { $0 as? String }
                for (column, text) in texts(row["gs_extra"] as? [String: Any] ?? [:]) { fields[column] = text }
                return fields
            }
        #endif
        var configuration = Configuration()
        configuration.readonly = true
        let json = try DatabaseQueue(path: remotePath, configuration: configuration).read { db in
            try String.fetchOne(
                db, sql: "SELECT fields FROM records WHERE lower(type) = lower(?) AND name = ? AND deleted = 0", arguments: [type, name])
        }
        return texts((try json.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }) ?? [:])
    }
}
