import ArgumentParser
import Foundation
import GroupStore

/// `groupstore retire`: remove a member that is gone for good.
struct RetireCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retire",
        abstract: "Remove a member that is not running: its cursor (so it no longer holds back pruning), payloads and folder.",
        discussion: """
            Refuses a live member. `status` and `gc` name the members that hold back pruning.

            Example:
              groupstore retire --group /tmp/demo --member old-dashboard
            """
    )

    @OptionGroup var options: GroupOption

    @Option(name: .long, help: ArgumentHelp("The member to retire.", valueName: "name"))
    var member: String

    @OptionGroup var output: ReportFormatOption

    func run() async throws {
        do {
            try await reportingFailure {
                let name = try MemberName(member)
                let group = options.group
                let report = try await offThePool { try GroupInspector(directory: group).retire(name) }
                if output.format == .json {
                    StandardOutput.writeLine(try ReportJSON.line(ReportJSON.Retire(report)))
                } else {
                    let cursor = report.cursor.map { "its cursor was \($0)" } ?? "it had no cursor"
                    StandardOutput.writeLine(
                        "retired member '\(report.member)' (\(cursor)); removed \(report.filesRemoved) files and its folder")
                }
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
