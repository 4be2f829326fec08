import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud
import Logging
import ServiceLifecycle

/// `groupstore cloud setup`: create or upgrade a remote, and declare tables on it.
struct CloudSetupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Create the remote, or upgrade its schema; with --group, declare tables on it.",
        discussion: """
            Prints one line saying what the remote is now. `cloud sync` and `cloud run` create an \
            embedded remote that is missing too; setup lets an administrator prepare it, and check \
            it, beforehand.

            With --group and tables, also declares those tables' record types (scope, columns, key, \
            read from the group's store), syncing no row, and prints one more line. On PostgreSQL, \
            run it as the schema's owner: public and shared tables are declared by the owner before \
            users sync them, so that no user chooses a table's scope and columns for the others.

            Examples:
              groupstore cloud setup --remote /srv/cloud.sqlite
              groupstore cloud setup --remote postgres://admin@db/app --group /var/lib/app/group \\
                --tables note --public-tables recipe
            """
    )

    @Option(name: .long, help: RemoteArgument.help)
    var remote: String

    /// Absolute and normalised (see ``GroupPath``).
    @Option(
        name: .long, help: ArgumentHelp("The group whose store has the tables to declare.", valueName: "path"),
        transform: GroupPath.absolute)
    var group: String?

    @OptionGroup var synced: CloudTableOptions

    func run() async throws {
        do {
            try await reportingFailure {
                let remote = try RemoteArgument(self.remote)
                let assets = try synced.assets()
                switch (group, synced.namesAny) {
                case (nil, true):
                    throw CommandFailure(message: "tables to declare need --group DIR: the group whose store has them")
                case (.some(let group), false):
                    throw CommandFailure(
                        message:
                            "--group \(group) is given but no tables: name those to declare with --tables, --public-tables or --shared-tables"
                    )
                default: break
                }
                if let group { try CloudOptions.checkGroup(group) }
                StandardOutput.writeLine(try await remote.setup())
                guard let group else { return }
                let synced = self.synced
                let configuration = try await offThePool { () throws -> CloudSyncConfiguration in
                    let logger = Logger(label: "groupstore.cloud")
                    let opened = try remote.open(user: try CloudOptions.unixUser(), gateway: try GatewayOptions.parse([]), logger: logger)
                    var configuration = CloudSyncConfiguration(group: group, remote: opened, logger: logger)
                    synced.apply(to: &configuration, assets: assets)
                    return configuration
                }
                // The remote's connections live while it runs.
                let opened = configuration.remote
                let connections = Task { try? await opened.run() }
                defer { connections.cancel() }
                let types = try await CloudSync.declareTables(configuration)
                let names = types.map { "\($0.name) (\($0.scope.rawValue))" }.joined(separator: ", ")
                StandardOutput.writeLine("\(remote.display): declared \(names)")
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
