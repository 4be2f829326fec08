import ArgumentParser
import Foundation
import GroupStore

/// `groupstore status`: members, cursors, history and payloads of a group.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a group's members (live or not, cursor), head sequence, history size and pending payloads.",
        discussion: """
            With --format json, prints one object:
              {"directory":…,"head":…,"prunedThrough":…,"historyTransactions":…,"historyChanges":…,
               "pendingPayloadFiles":…,"databaseBytes":…,"members":[{"name":…,"live":…,"cursor":…,"payloadFiles":…}]}

            Example:
              groupstore status --group /tmp/demo --format json
            """
    )

    @OptionGroup var options: GroupOption

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(name: .long, help: "Output format.")
    var format: Format = .text

    func run() async throws {
        do {
            try await reportingFailure {
                let status = try GroupInspector(directory: options.group).status()
                if format == .json {
                    StandardOutput.writeLine(status.json)
                    return
                }
                var lines = [
                    "group \(status.directory)",
                    "head seq \(status.head), history \(status.historyTransactions) transactions / \(status.historyChanges) changes "
                        + "(pruned through \(status.prunedThrough)), database \(status.databaseBytes) bytes, "
                        + "\(status.pendingPayloadFiles) payload files",
                ]
                for member in status.members {
                    lines.append(
                        "  \(member.name): \(member.live ? "live" : "not running"), cursor \(member.cursor.map(String.init) ?? "-"), "
                            + "\(member.payloadFiles) payload files")
                }
                StandardOutput.writeLine(lines.joined(separator: "\n"))
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
