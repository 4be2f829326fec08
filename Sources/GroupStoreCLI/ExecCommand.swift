import ArgumentParser
import Foundation
import GRDB
import GroupStore
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `groupstore exec`: run SQL as one tracked transaction and publish it.
struct ExecCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run SQL as one tracked transaction (creating the group if missing) and publish it.",
        discussion: """
            All of the SQL runs in one transaction: it commits whole or not at all.
            Before anything runs, the SQL is split into statements, and it is refused
            (nothing run, exit status 1) if any of them is BEGIN, COMMIT, END,
            ROLLBACK, SAVEPOINT or RELEASE (exec opens and commits the transaction
            itself), VACUUM (it cannot run inside a transaction), ATTACH or DETACH
            (an attachment would last only as long as this process): run those
            with the sqlite3 shell on DIR/store.sqlite.

            Output, once committed: the rows of the statements that return rows
            (SELECT, PRAGMA, … RETURNING), in order, one line per row, no header:
            values separated by a tab, NULL as an empty field, a blob as X'hex',
            text with \\ tab newline carriage-return escaped as \\\\ \\t \\n \\r.
            The last line is "seq N" (the transaction's sequence number) or
            "no tracked changes".

            Example:
              groupstore exec --group /tmp/demo --member tool \\
                --sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)"
              groupstore exec --group /tmp/demo --member tool \\
                --sql "INSERT INTO notes(body) VALUES ('hi'); SELECT * FROM notes"
              groupstore exec --group /tmp/demo --member tool --sql-file 002-tags.sql
              echo "DELETE FROM notes WHERE id = 1" |
                groupstore exec --group /tmp/demo --member tool --sql-file -
            """
    )

    @OptionGroup var options: MemberOptions

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "The SQL to run: several statements allowed, taken as is even if it starts with '-' (a comment).",
            valueName: "sql"))
    var sql: String?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Read the SQL to run from this file ('-': standard input). Give either --sql or --sql-file.",
            valueName: "path"))
    var sqlFile: String?

    func run() async throws {
        do {
            try await reportingFailure {
                let sql = try readSQL()
                let databasePath = options.group + "/store.sqlite"
                // Checked before anything is opened or run.
                for statement in SQLScript.statements(in: sql) {
                    if let refusal = SQLScript.refusal(for: statement.text) {
                        throw CommandFailure(message: SQLScript.message(for: refusal, statement: statement, databasePath: databasePath))
                    }
                }
                // A writer only: it keeps no cursor and holds back no pruning.
                var configuration = try options.configuration(defaultLevel: .warning)
                configuration.writesOnly = true
                let store = try await GroupStore.open(configuration)
                let result: (value: [String], seq: Int64?)
                do {
                    result = try await store.writeWithSequence { db in try Self.execute(sql, in: db, databasePath: databasePath) }
                } catch {
                    await store.close()
                    throw error
                }
                await store.flushPublications()
                await store.close()
                var lines = result.value
                lines.append(result.seq.map { "seq \($0)" } ?? "no tracked changes")
                StandardOutput.writeLine(lines.joined(separator: "\n"))
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }

    /// The SQL from `--sql` or `--sql-file` (exactly one of them).
    private func readSQL() throws -> String {
        switch (sql, sqlFile) {
        case (let sql?, nil):
            return sql
        case (nil, let path?):
            return try Self.readFile(path)
        case (.some, .some):
            throw CommandFailure(message: "give the SQL with --sql or with --sql-file, not both")
        case (nil, nil):
            throw CommandFailure(message: "missing the SQL to run: give --sql SQL or --sql-file PATH ('-' for standard input)")
        }
    }

    /// The whole of `path` (`-`: standard input) as UTF-8 text.
    private static func readFile(_ path: String) throws -> String {
        let fd = path == "-" ? STDIN_FILENO : retryingOpen(path)
        guard fd >= 0 else {
            throw CommandFailure(message: "cannot read --sql-file \(path): \(String(cString: strerror(errno)))")
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let name = path == "-" ? "standard input" : path
                throw CommandFailure(message: "cannot read --sql-file \(name): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CommandFailure(message: "--sql-file \(path == "-" ? "standard input" : path) is not UTF-8 text")
        }
        return text
    }

    private static func retryingOpen(_ path: String) -> CInt {
        while true {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 || errno != EINTR { return fd }
        }
    }

    /// Runs every statement of `sql` in `db` (inside the store's write
    /// transaction) and returns the rows the statements produced, as lines.
    /// A statement that would end or leave the transaction is refused again
    /// here, as SQLite itself split the text: throwing rolls everything back.
    private static func execute(_ sql: String, in db: Database, databasePath: String) throws -> [String] {
        var lines: [String] = []
        let statements = try db.allStatements(sql: sql)
        var number = 0
        while let statement = try statements.next() {
            number += 1
            let text = statement.sql
            if let refusal = SQLScript.refusal(for: text) {
                let named = SQLScript.Statement(number: number, text: text)
                throw CommandFailure(message: SQLScript.message(for: refusal, statement: named, databasePath: databasePath))
            }
            if statement.columnCount > 0 {
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() { lines.append(SQLScript.line(row)) }
            } else {
                try statement.execute()
            }
        }
        return lines
    }
}
