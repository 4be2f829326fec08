import ArgumentParser
import Foundation
import GroupStore

/// `groupstore history`: the committed transactions still in the history.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the transactions in the history after a sequence number, oldest first.",
        discussion: """
            Lines have the shape of `watch`, without receivedAt.

            Example:
              groupstore history --group /tmp/demo --since 40 --format jsonl
            """
    )

    @OptionGroup var options: GroupOption

    @Option(name: .long, help: ArgumentHelp("Only transactions after this sequence number.", valueName: "seq"))
    var since: Int64 = 0

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, jsonl
    }

    @Option(name: .long, help: "Output format (jsonl: one JSON object per line).")
    var format: Format = .text

    func validate() throws {
        guard since >= 0 else { throw ValidationError("--since must be 0 or more") }
    }

    func run() async throws {
        do {
            try await reportingFailure {
                let group = options.group
                let inspector = try await offThePool { try GroupInspector(directory: group) }
                var cursor = since
                while true {
                    let after = cursor
                    let saves = try await offThePool { try inspector.history(after: after) }
                    guard let last = saves.last else { break }
                    for save in saves {
                        StandardOutput.writeLine(format == .jsonl ? save.jsonLine() : save.textLine(receivedAt: nil))
                    }
                    cursor = last.seq
                }
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
