import Foundation
import GRDB
import Subprocesses
import XCTest

/// What `groupstore` accepts as input: relative group paths, SQL that must
/// run as one transaction, SQL that looks like an option, SQL from a file or
/// standard input, and what `exec` prints.
final class CLIInputProcessTests: ProcessTestCase {
    /// The built `groupstore`, for children started through `/bin/sh`.
    private var groupstorePath: String { ChildProcess.productsDirectory.appendingPathComponent("groupstore").path }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: true)
    }

    /// `executable arguments…` run with `directory` as its current directory
    /// (`exec`ed by the shell, so the child's pid is the executable's).
    private func spawn(in directory: String, _ executable: String, _ arguments: [String], name: String) throws -> ChildProcess {
        try spawn("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", directory, executable] + arguments, name: name)
    }

    /// Runs `groupstore arguments…` to the end.
    private func run(_ arguments: [String], name: String = "groupstore") throws -> ChildProcess {
        let child = try spawn("groupstore", arguments, name: name)
        try child.waitForExit()
        return child
    }

    /// Asserts a failure: exit status 1 and one line on stderr containing every one of `texts`.
    private func assertFailsWithOneLine(
        _ child: ChildProcess, containing texts: [String], _ what: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        XCTAssertEqual(try child.waitForExit(), 1, "\(what) should fail: \(child.output) \(child.errors)", file: file, line: line)
        XCTAssertEqual(child.errors.count, 1, "\(what): expected one line on stderr, got \(child.errors)", file: file, line: line)
        let message = child.errors.first ?? ""
        XCTAssertTrue(message.hasPrefix("groupstore: "), "\(what): \(message)", file: file, line: line)
        for text in texts {
            XCTAssertTrue(message.contains(text), "\(what): '\(message)' should contain '\(text)'", file: file, line: line)
        }
    }

    /// Reads the database of the group at `path`.
    private func read<T>(groupAt path: String, _ body: (Database) throws -> T) throws -> T {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: path + "/store.sqlite", configuration: configuration).read(body)
    }

    /// The group's head sequence number, from `groupstore status --format json`.
    private func head() throws -> Int? {
        let status = try run(["status", "--group", group, "--format", "json"], name: "status")
        XCTAssertEqual(status.exitStatus, 0, "\(status.errors)")
        let object = try JSONSerialization.jsonObject(with: Data(status.output.joined().utf8)) as? [String: Any]
        return object?["head"] as? Int
    }

    // MARK: 1. Relative group paths

    func testRelativeGroupPathWorksForExecAndWatch() throws {
        let parent = URL(fileURLWithPath: group).resolvingSymlinksInPath().path
        let absolute = parent + "/g"
        // Each spelling names the same group, whatever the current directory.
        let forms = ["g", "g/", "./g", "g//", "./g/."]
        var lastSeq = 0
        for (index, form) in forms.enumerated() {
            let sql = (index == 0 ? "CREATE TABLE t(id INTEGER PRIMARY KEY); " : "") + "INSERT INTO t VALUES (\(index))"
            let exec = try spawn(
                in: parent, groupstorePath, ["exec", "--group", form, "--member", "tool", "--sql", sql], name: "exec \(form)")
            XCTAssertEqual(try exec.waitForExit(), 0, "exec --group \(form): \(exec.errors.suffix(8))")
            let (rows, seq) = rowsAndSeq(exec.output.joined(separator: "\n"))
            XCTAssertEqual(rows, [], "exec --group \(form)")
            XCTAssertGreaterThan(seq ?? 0, lastSeq, "exec --group \(form) printed \(exec.output)")
            lastSeq = seq ?? lastSeq
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: parent + "/g/g"), "a nested group was made")

        let watchers = try [("g", "left"), ("./g//", "right")].map { form, member in
            let watcher = try spawn(
                in: parent, groupstorePath, ["watch", "--group", form, "--member", member, "--format", "jsonl"], name: "watch \(form)")
            // The path is resolved once, at start: the absolute path is printed.
            let expected = "groupstore: watching \(absolute) as \(member)"
            let joined = try watcher.wait("stderr '\(expected)'", timeout: 30) { _, errors, exit -> Bool? in
                errors.contains { $0.contains(expected) } ? true : exit != nil ? false : nil
            }
            guard joined else { throw HarnessError(message: "watch --group \(form) exited: \(watcher.errors.suffix(8))") }
            return watcher
        }
        let exec = try spawn(
            in: parent, groupstorePath, ["exec", "--group", "g/", "--member", "tool", "--sql", "INSERT INTO t VALUES (100)"], name: "exec")
        XCTAssertEqual(try exec.waitForExit(), 0, "\(exec.errors)")
        let seq = try XCTUnwrap(rowsAndSeq(exec.output.joined(separator: "\n")).seq, "exec printed \(exec.output)")
        XCTAssertGreaterThan(seq, lastSeq)
        for watcher in watchers {
            let delivered = try saves(watcher.waitForLines(1))
            XCTAssertEqual(delivered.first?.seq, Int64(seq), "\(watcher.name)")
            XCTAssertEqual(delivered.first?.inserted["t"], [100], "\(watcher.name)")
        }
        for watcher in watchers {
            watcher.send(SIGTERM)
            XCTAssertEqual(try watcher.waitForExit(), 0, "\(watcher.name): \(watcher.errors.suffix(5))")
        }

        let status = try spawn(in: parent, groupstorePath, ["status", "--group", "./g/", "--format", "json"], name: "status")
        XCTAssertEqual(try status.waitForExit(), 0, "\(status.errors)")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.output.joined().utf8)) as? [String: Any])
        XCTAssertEqual(object["directory"] as? String, absolute)
        XCTAssertEqual(try read(groupAt: absolute) { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") }, forms.count + 1)
    }

    func testLibraryOpensARelativeGroupPathItself() throws {
        // groupstore-peer hands --group to GroupConfiguration as given. A name
        // of one character is what made Foundation's
        // NSString.deletingLastPathComponent trap (SIGILL) in the library.
        let parent = URL(fileURLWithPath: group).resolvingSymlinksInPath().path
        for (form, member) in [("l", "one"), ("l//", "two"), ("./l/.", "three")] {
            let peer = try spawn(
                in: parent, ChildProcess.productsDirectory.appendingPathComponent("groupstore-peer").path,
                ["--group", form, "--member", member, "--writes", "1"], name: "peer \(form)")
            XCTAssertEqual(try peer.waitForExit(), 0, "peer --group \(form): \(peer.errors.suffix(8))")
            XCTAssertTrue(peer.errors.contains { $0.contains("wrote 1") }, "\(peer.errors.suffix(5))")
        }
        let authors = try read(groupAt: parent + "/l") { try String.fetchAll($0, sql: "SELECT author FROM items ORDER BY id") }
        XCTAssertEqual(authors, ["one", "two", "three"])
    }

    // MARK: 2. One transaction, whatever the SQL

    func testExecRefusesCommitAndCommitsNothing() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO t VALUES (1, 'kept')")
        let committed = try head()
        let child = try run(
            ["exec", "--group", group, "--member", "tool", "--sql", "INSERT INTO t VALUES (2, 'x'); COMMIT; INSERT INTO t VALUES (3, 'y')"])
        try assertFailsWithOneLine(
            child, containing: ["refused statement 2 (COMMIT)", "one transaction", "nothing was committed"], "COMMIT")
        XCTAssertEqual(child.output, [])
        XCTAssertEqual(try read { try Int.fetchAll($0, sql: "SELECT id FROM t ORDER BY id") }, [1])
        XCTAssertEqual(try head(), committed)
    }

    func testExecRefusesEveryFormOfTransactionControlAndCommitsNothing() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO t VALUES (1, 'kept')")
        let committed = try head()
        let insert = "INSERT INTO t VALUES (2, 'x')"
        let later = "INSERT INTO t VALUES (3, 'y')"
        // (SQL, the refused statement's number, how the message names it)
        let cases: [(String, Int, String)] = [
            ("\(insert); commit transaction; \(later)", 2, "(commit transaction)"),
            ("\(insert); END TRANSACTION; \(later)", 2, "(END TRANSACTION)"),
            ("\(insert);\nend;\n\(later)", 2, "(end)"),
            ("\(insert); ROLLBACK; \(later)", 2, "(ROLLBACK)"),
            ("\(insert); Rollback Transaction", 2, "(Rollback Transaction)"),
            ("BEGIN; \(insert); COMMIT", 1, "(BEGIN)"),
            ("begin immediate transaction; \(insert)", 1, "(begin immediate transaction)"),
            ("SAVEPOINT a; \(insert); RELEASE a", 1, "(SAVEPOINT a)"),
            ("\(insert); RELEASE SAVEPOINT a; \(later)", 2, "(RELEASE SAVEPOINT a)"),
            ("\(insert);\n  -- done, now commit\n  /* really */ CoMmIt;\n\(later)", 2, "(CoMmIt)"),
            ("\(insert);\r\n-- windows line ends\r\nCOMMIT\r\n", 2, "(COMMIT)"),
            ("\(insert);;; ;COMMIT; \(later)", 2, "(COMMIT)"),
            ("\t\n COMMIT", 1, "(COMMIT)"),
        ]
        for (sql, number, named) in cases {
            let child = try run(["exec", "--group", group, "--member", "tool", "--sql", sql])
            try assertFailsWithOneLine(
                child, containing: ["refused statement \(number) \(named)", "one transaction", "nothing was committed"],
                sql.debugDescription)
            XCTAssertEqual(child.output, [], sql.debugDescription)
            XCTAssertEqual(try read { try Int.fetchAll($0, sql: "SELECT id FROM t ORDER BY id") }, [1], "after \(sql.debugDescription)")
        }
        XCTAssertEqual(try head(), committed, "a refused exec recorded a transaction")
    }

    func testExecRefusesVacuumAttachAndDetachPointingToTheSQLiteShell() throws {
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        let committed = try head()
        let cases: [(String, Int, String)] = [
            ("VACUUM", 1, "VACUUM cannot run inside a transaction"),
            ("INSERT INTO t VALUES (2); vacuum", 2, "VACUUM cannot run inside a transaction"),
            ("ATTACH DATABASE ':memory:' AS aux; INSERT INTO t VALUES (2)", 1, "exec does not run ATTACH"),
            ("INSERT INTO t VALUES (2); /* x */ detach aux", 2, "exec does not run DETACH"),
        ]
        for (sql, number, reason) in cases {
            let child = try run(["exec", "--group", group, "--member", "tool", "--sql", sql])
            try assertFailsWithOneLine(
                child,
                containing: [
                    "refused statement \(number) (", reason, "run it with the sqlite3 shell (sqlite3 \(group)/store.sqlite)",
                    "nothing was committed",
                ], sql)
            XCTAssertEqual(try read { try Int.fetchAll($0, sql: "SELECT id FROM t ORDER BY id") }, [1], "after \(sql)")
        }
        XCTAssertEqual(try head(), committed)
    }

    func testRefusedSQLDoesNotEvenCreateTheGroup() throws {
        let fresh = group + "/fresh"
        let child = try run(["exec", "--group", fresh, "--member", "tool", "--sql", "CREATE TABLE t(id INTEGER PRIMARY KEY); COMMIT"])
        try assertFailsWithOneLine(child, containing: ["refused statement 2 (COMMIT)"], "COMMIT on a fresh group")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fresh), "the refused exec created the group")
    }

    func testTriggerBodiesCommentsAndQuotedSemicolonsAreNotMistakenForTransactionControl() throws {
        let printed = try exec(
            "tool",
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE log(id INTEGER PRIMARY KEY, note TEXT);
            CREATE TRIGGER t_logged AFTER INSERT ON t BEGIN
              INSERT INTO log(note) VALUES ('begin; ' || new.body);
              UPDATE log SET note = note || ' end' WHERE id = (SELECT max(id) FROM log);
            END;
            INSERT INTO t(body) VALUES ('x; COMMIT; y');  -- COMMIT
            /* ROLLBACK; */ INSERT INTO t(body) VALUES ('z');
            SELECT note FROM log ORDER BY id
            """)
        let (rows, seq) = rowsAndSeq(printed)
        XCTAssertEqual(rows, ["begin; x; COMMIT; y end", "begin; z end"])
        XCTAssertNotNil(seq, printed)
    }

    // MARK: 3. SQL that looks like an option; SQL from a file or standard input

    func testSQLStartingWithCommentIsAccepted() throws {
        let migration = """
            -- 001: notes
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            INSERT INTO notes(body) VALUES ('hello');
            """
        let (rows, seq) = rowsAndSeq(try exec("tool", migration))
        XCTAssertEqual(rows, [])
        XCTAssertNotNil(seq)
        XCTAssertEqual(try exec("tool", "--only a comment"), "no tracked changes")
        XCTAssertEqual(try exec("tool", "-- count\nSELECT count(*) FROM notes"), "1\nno tracked changes")
        XCTAssertEqual(try read { try String.fetchAll($0, sql: "SELECT body FROM notes") }, ["hello"])
    }

    func testSQLFromFileAndStandardInput() throws {
        let file = group + "/001 notes.sql"
        let migration =
            "-- 001: notes\r\nCREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);\r\nINSERT INTO notes(body) VALUES ('from a file');\r\n"
        try Data(migration.utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try run(["exec", "--group", group + "/g", "--member", "tool", "--sql-file", file])
        XCTAssertEqual(fromFile.exitStatus, 0, "\(fromFile.errors)")
        let fromFileSeq = try XCTUnwrap(rowsAndSeq(fromFile.output.joined(separator: "\n")).seq, "\(fromFile.output)")
        XCTAssertEqual(fromFile.output.count, 1)

        // Standard input through a pipe that ends.
        func piped(_ sql: String) throws -> ChildProcess {
            let child = try spawn(
                "/bin/sh",
                ["-c", "printf '%s' \"$0\" | \"$1\" exec --group \"$2\" --member tool --sql-file -", sql, groupstorePath, group + "/g"],
                name: "exec stdin")
            try child.waitForExit()
            return child
        }
        let fromInput = try piped("-- from stdin\nINSERT INTO notes(body) VALUES ('from input'); SELECT body FROM notes ORDER BY id")
        XCTAssertEqual(fromInput.exitStatus, 0, "\(fromInput.errors)")
        let (inputRows, inputSeq) = rowsAndSeq(fromInput.output.joined(separator: "\n"))
        XCTAssertEqual(inputRows, ["from a file", "from input"])
        XCTAssertGreaterThan(inputSeq ?? 0, fromFileSeq)
        // The same checks apply whatever the source.
        try assertFailsWithOneLine(
            piped("INSERT INTO notes(body) VALUES ('no'); COMMIT"), containing: ["refused statement 2 (COMMIT)"], "COMMIT on stdin")

        let missing = group + "/missing.sql"
        try assertFailsWithOneLine(
            run(["exec", "--group", group + "/g", "--member", "tool", "--sql-file", missing]),
            containing: ["--sql-file \(missing)", "No such file"], "missing file")
        try assertFailsWithOneLine(
            run(["exec", "--group", group + "/g", "--member", "tool", "--sql", "SELECT 1", "--sql-file", file]),
            containing: ["not both"], "both")
        try assertFailsWithOneLine(
            run(["exec", "--group", group + "/g", "--member", "tool"]), containing: ["--sql", "--sql-file"], "neither")
        XCTAssertEqual(
            try read(groupAt: group + "/g") { try String.fetchAll($0, sql: "SELECT body FROM notes ORDER BY id") },
            ["from a file", "from input"])
    }

    // MARK: 4. Rows

    func testExecPrintsSelectedRows() throws {
        let printed = try exec(
            "tool",
            """
            CREATE TABLE r(id INTEGER PRIMARY KEY, name TEXT, score REAL, data BLOB);
            INSERT INTO r VALUES (1, 'plain', 1.5, NULL), (2, 'tab\there', NULL, x'00ff'), (3, 'two\nlines\\', -2, NULL);
            SELECT id, name, score, data FROM r ORDER BY id;
            SELECT count(*) FROM r;
            """)
        let (rows, seq) = rowsAndSeq(printed)
        XCTAssertEqual(rows, ["1\tplain\t1.5\t", "2\ttab\\there\t\tX'00FF'", "3\ttwo\\nlines\\\\\t-2.0\t", "3"])
        XCTAssertEqual(try exec("tool", "SELECT name FROM r WHERE id = 1; SELECT NULL"), "plain\n\nno tracked changes")
        let (returned, nextSeq) = rowsAndSeq(try exec("tool", "INSERT INTO r(name) VALUES ('new') RETURNING id, name"))
        XCTAssertEqual(returned, ["4\tnew"])
        XCTAssertGreaterThan(nextSeq ?? 0, seq ?? .max)
        XCTAssertEqual(try exec("tool", "SELECT id FROM r WHERE id > 100"), "no tracked changes")
    }

    // MARK: 5. Formats in --help

    func testHelpListsOnlyTheFormatsEachCommandAccepts() throws {
        let accepted = ["status": "text, json", "gc": "text, json", "history": "text, jsonl", "watch": "text, jsonl"]
        for (command, values) in accepted {
            let help = try run([command, "--help"])
            XCTAssertEqual(help.exitStatus, 0)
            let text = help.output.joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            XCTAssertTrue(text.contains("(values: \(values);"), "\(command) --help: \(text)")
        }
        try exec("tool", "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        XCTAssertEqual(try run(["status", "--group", group, "--format", "json"]).exitStatus, 0)
        XCTAssertEqual(try run(["gc", "--group", group, "--format", "json"]).exitStatus, 0)
        XCTAssertEqual(try run(["history", "--group", group, "--format", "jsonl"]).exitStatus, 0)
        XCTAssertNotEqual(try run(["status", "--group", group, "--format", "jsonl"]).exitStatus, 0)
        XCTAssertNotEqual(try run(["history", "--group", group, "--format", "json"]).exitStatus, 0)
    }
}

extension ChildProcess {
    /// The exit status, once exited.
    fileprivate var exitStatus: Int32? { process.status }
}
