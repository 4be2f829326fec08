import ArgumentParser
import Foundation
import GroupStore

/// `groupstore gc`: prune the history and payload files now.
struct GCCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Prune now: history and payloads every member consumed, and anything older than the retention.",
        discussion: """
            Members that only write (exec, scripts) hold nothing back; the report names the members whose
            cursors do. With --format json: {"prunedThrough":…,"transactionsRemoved":…,"changesRemoved":…,
            "payloadFilesRemoved":…,"temporaryFilesRemoved":…,"heldBackBy":[{"member":…,"cursor":…}]}

            Example:
              groupstore gc --group /tmp/demo --retention 86400
            """
    )

    @OptionGroup var options: GroupOption

    @Option(name: .long, help: ArgumentHelp("Prune what is older than this many seconds, consumed or not.", valueName: "seconds"))
    var retention: Double = 7 * 24 * 3600

    @OptionGroup var output: ReportFormatOption

    func validate() throws {
        guard retention >= 0 else { throw ValidationError("--retention must be 0 or more") }
    }

    func run() async throws {
        do {
            try await reportingFailure {
                let (group, retention) = (options.group, retention)
                let report = try await offThePool { try GroupInspector(directory: group).prune(retention: retention) }
                if output.format == .json {
                    StandardOutput.writeLine(try ReportJSON.line(ReportJSON.Prune(report)))
                } else {
                    var line =
                        "removed \(report.transactionsRemoved) transactions (\(report.changesRemoved) changes), "
                        + "\(report.payloadFilesRemoved) payload files, \(report.temporaryFilesRemoved) temporary files; "
                        + "history now starts after seq \(report.prunedThrough)"
                    if !report.heldBackBy.isEmpty {
                        line +=
                            "; held back by "
                            + report.heldBackBy.map { "'\($0.member)' at seq \($0.cursor)" }.joined(separator: ", ")
                            + " (retire a member gone for good with `groupstore retire`)"
                    }
                    StandardOutput.writeLine(line)
                }
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
