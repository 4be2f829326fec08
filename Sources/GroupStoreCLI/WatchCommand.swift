import ArgumentParser
import Foundation
import GroupStore
import Logging
import ServiceLifecycle
import UnixSignals

/// `groupstore watch`: join the group and print each delivered save.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Join the group and print one line per save delivered, until SIGINT or SIGTERM.",
        discussion: """
            Saves committed while this member was down are printed first.
            In jsonl format each line is one JSON object:
              {"seq":…,"author":…,"committedAt":…,"receivedAt":…,"changes":[{"entity":…,"inserted":[…],"updated":[…],"deleted":[…],"reset":…}]}

            Example:
              groupstore watch --group /tmp/demo --member dashboard --entities notes --format jsonl
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, jsonl
    }

    @OptionGroup var options: MemberOptions

    @Option(name: .long, help: ArgumentHelp("Only saves touching these entities (comma-separated).", valueName: "A,B"))
    var entities: String?

    @Option(name: .long, help: "Output format (jsonl: one JSON object per line).")
    var format: Format = .text

    func run() async throws {
        do {
            try await reportingFailure {
                var configuration = try options.configuration(defaultLevel: .info)
                if let entities {
                    configuration.inScopeEntityNames = Set(entities.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                }
                let store = try await GroupStore.open(configuration)
                let service = WatchService(store: store, format: format)
                let group = ServiceGroup(
                    configuration: .init(
                        services: [store, service], gracefulShutdownSignals: [.sigterm, .sigint], logger: configuration.logger))
                try await group.run()
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}

/// Prints saves as they arrive, beside the store in one service group; on
/// graceful shutdown its loop ends and the store saves its cursor and closes.
struct WatchService: Service {
    let store: GroupStore
    let format: WatchCommand.Format

    func run() async throws {
        // Announced from inside the service group, once SIGTERM and SIGINT are
        // trapped (a signal sent on seeing this line is handled gracefully),
        // and once the group is watched: starting is idempotent, so the
        // store's own service finds it done. (Subscribing needs no such care:
        // every save after this member's cursor is delivered either way.)
        let store = self.store
        try await offThePool { try store.startBlocking() }
        FileHandle.standardError.write(Data("groupstore: watching \(store.directoryPath) as \(store.member)\n".utf8))
        for await save in store.saves() {
            let received = Date()
            switch format {
            case .jsonl: StandardOutput.writeLine(save.jsonLine(receivedAt: received))
            case .text: StandardOutput.writeLine(save.textLine(receivedAt: received))
            }
        }
        // The stream also ends when the group is replaced under this member.
        if let error = store.groupReplacedError { throw error }
    }
}

enum StandardOutput {
    /// Writes one line to stdout at once (no buffering: a reader sees it now).
    static func writeLine(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

extension Save {
    /// `seq 42 by collector, 0.21 ms after commit: items +[1] ~[2](name) -[3]`
    func textLine(receivedAt: Date?) -> String {
        let when =
            receivedAt.map { String(format: "%.2f ms after commit", $0.timeIntervalSince(committedAt) * 1000) }
            ?? "committed \(committedAt)"
        if kind == .resync {
            return "seq \(seq) resync: history before this was pruned; refetch"
        }
        let parts = changes.map { change -> String in
            var text = change.entity
            if !change.inserted.isEmpty { text += " +[\(change.inserted.map(\.json).joined(separator: ","))]" }
            if !change.updated.isEmpty {
                text += " ~[\(change.updated.map(\.json).joined(separator: ","))]"
            }
            if !change.deleted.isEmpty { text += " -[\(change.deleted.map(\.json).joined(separator: ","))]" }
            if change.reset { text += " (reset)" }
            return text
        }
        return "seq \(seq) by \(author), \(when): \(parts.joined(separator: "; "))"
    }
}
