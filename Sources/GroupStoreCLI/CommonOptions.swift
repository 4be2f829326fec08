import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud
import Logging

/// Options every subcommand that joins a group takes.
struct MemberOptions: ParsableArguments {
    /// Absolute and normalised (see ``GroupPath``).
    @Option(name: .long, help: GroupPath.help, transform: GroupPath.absolute)
    var group: String

    @Option(name: .long, help: ArgumentHelp("This process's member name (A-Z a-z 0-9 . _ - @ +).", valueName: "name"))
    var member: String

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level?

    /// The configuration for this member, with a logger bootstrapped once.
    func configuration(defaultLevel: Logger.Level) throws -> GroupConfiguration {
        LogSetup.bootstrap(level: logLevel ?? defaultLevel)
        let name = try MemberName(member)
        return GroupConfiguration(directory: group, member: name, logger: Logger(label: "groupstore"))
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

enum LogSetup {
    /// Sends swift-log output to stderr at `level` (executables bootstrap; the
    /// library never does). Call once per process.
    static func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

/// Runs `body`, turning any error into one line on stderr and exit status 1.
func reportingFailure<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as GroupStoreError {
        throw CommandFailure(message: error.message)
    } catch let error as CloudSyncError {
        throw CommandFailure(message: error.message)
    } catch let error as CommandFailure {
        throw error
    } catch {
        throw CommandFailure(message: "\(error)".replacingOccurrences(of: "\n", with: " "))
    }
}

/// A failure printed as `groupstore: <message>` with exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension CommandFailure {
    /// Prints the message and exits 1 (ArgumentParser would add usage text).
    static func exit(_ error: CommandFailure) -> Never {
        FileHandle.standardError.write(Data("groupstore: \(error.message)\n".utf8))
        Foundation.exit(1)
    }
}
