import ArgumentParser
import Foundation
import GroupStore

/// `groupstore status`: members, cursors, history and payloads of a group.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a group's members (live or not, cursor), head sequence, history size and pending payloads.",
        discussion: """
            A member with no cursor only writes and holds nothing back; the members with the lowest cursor behind
            the head hold back pruning (retire one that is gone for good with `groupstore retire`).

            With --format json, prints one object:
              {"directory":…,"head":…,"prunedThrough":…,"historyTransactions":…,"historyChanges":…,
               "pendingPayloadFiles":…,"databaseBytes":…,"holdingBack":[…],
               "members":[{"name":…,"live":…,"cursor":…|null,"behind":…|null,"payloadFiles":…,"holdsBackPruning":…}]}

            Example:
              groupstore status --group /tmp/demo --format json
            """
    )

    @OptionGroup var options: GroupOption

    @OptionGroup var output: ReportFormatOption

    func run() async throws {
        do {
            try await reportingFailure {
                let group = options.group
                let status = try await offThePool { try GroupInspector(directory: group).status() }
                if output.format == .json {
                    StandardOutput.writeLine(try ReportJSON.line(ReportJSON.Status(status)))
                    return
                }
                var lines = [
                    "group \(status.directory)",
                    "head seq \(status.head), history \(status.historyTransactions) transactions / \(status.historyChanges) changes "
                        + "(pruned through \(status.prunedThrough)), database \(status.databaseBytes) bytes, "
                        + "\(status.pendingPayloadFiles) payload files",
                ]
                let holding = Set(status.holdingBack.map(\.name))
                for member in status.members {
                    let cursor = member.cursor.map { "cursor \($0) (\(member.behind ?? 0) behind)" } ?? "writes only, no cursor"
                    lines.append(
                        "  \(member.name): \(member.live ? "live" : "not running"), \(cursor), \(member.payloadFiles) payload files"
                            + (holding.contains(member.name) ? ", holds back pruning" : ""))
                }
                StandardOutput.writeLine(lines.joined(separator: "\n"))
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
