import ArgumentParser
import Foundation

/// `groupstore cloud setup`: create or upgrade a remote.
struct CloudSetupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Create the remote, or upgrade its schema; does nothing to a remote that is up to date.",
        discussion: """
            Prints one line saying what the remote is now. `cloud sync` and `cloud run` create an \
            embedded remote that is missing too; setup lets an administrator prepare it, and check \
            it, beforehand.

            Example:
              groupstore cloud setup --remote /srv/cloud.sqlite
            """
    )

    @Option(name: .long, help: RemoteArgument.help)
    var remote: String

    func run() async throws {
        do {
            try await reportingFailure {
                let remote = try RemoteArgument(self.remote)
                StandardOutput.writeLine(try await remote.setup())
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
