import ArgumentParser
import Foundation
import GRDB
import GroupStore
import Logging

/// `groupstore exec`: run SQL as one tracked transaction and publish it.
struct ExecCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run SQL as one tracked transaction (creating the group if missing) and publish it.",
        discussion: """
            Prints the transaction's sequence number, or "no tracked changes".

            Example:
              groupstore exec --group /tmp/demo --member tool \\
                --sql "CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('hi')"
            """
    )

    @OptionGroup var options: MemberOptions

    @Option(name: .long, help: ArgumentHelp("The SQL to run (several statements allowed).", valueName: "sql"))
    var sql: String

    func run() async throws {
        do {
            try await reportingFailure {
                let store = try await GroupStore.open(options.configuration(defaultLevel: .warning))
                defer { store.close() }
                let sql = self.sql
                let result = try await store.writeWithSequence { db in try db.execute(sql: sql) }
                store.flushPublications()
                print(result.seq.map { "seq \($0)" } ?? "no tracked changes")
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
