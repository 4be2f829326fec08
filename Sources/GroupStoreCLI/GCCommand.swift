import ArgumentParser
import Foundation
import GroupStore

/// `groupstore gc`: prune the history and payload files now.
struct GCCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Prune now: history and payloads every member consumed, and anything older than the retention.",
        discussion: """
            Example:
              groupstore gc --group /tmp/demo --retention 86400
            """
    )

    @OptionGroup var options: GroupOption

    @Option(name: .long, help: ArgumentHelp("Prune what is older than this many seconds, consumed or not.", valueName: "seconds"))
    var retention: Double = 7 * 24 * 3600

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(name: .long, help: "Output format.")
    var format: Format = .text

    func validate() throws {
        guard retention >= 0 else { throw ValidationError("--retention must be 0 or more") }
    }

    func run() async throws {
        do {
            try await reportingFailure {
                let report = try GroupInspector(directory: options.group).prune(retention: retention)
                if format == .json {
                    StandardOutput.writeLine(
                        "{\"prunedThrough\":\(report.prunedThrough),\"transactionsRemoved\":\(report.transactionsRemoved),"
                            + "\"changesRemoved\":\(report.changesRemoved),\"payloadFilesRemoved\":\(report.payloadFilesRemoved),"
                            + "\"temporaryFilesRemoved\":\(report.temporaryFilesRemoved)}")
                } else {
                    StandardOutput.writeLine(
                        "removed \(report.transactionsRemoved) transactions (\(report.changesRemoved) changes), "
                            + "\(report.payloadFilesRemoved) payload files, \(report.temporaryFilesRemoved) temporary files; "
                            + "history now starts after seq \(report.prunedThrough)")
                }
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
