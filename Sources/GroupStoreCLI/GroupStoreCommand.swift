import ArgumentParser

/// `groupstore`: join, write to and watch a group from the shell.
@main
struct GroupStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groupstore",
        abstract: "Share one SQLite database between processes and watch each other's saves live.",
        subcommands: [
            ExecCommand.self, WatchCommand.self, StatusCommand.self, HistoryCommand.self, GCCommand.self, RetireCommand.self,
            CloudCommand.self, ServeCommand.self,
        ]
    )
}
