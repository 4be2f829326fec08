import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud
import Logging
import ServiceLifecycle
import UnixSignals

/// `groupstore cloud run`: sync continuously until SIGINT or SIGTERM.
struct CloudRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Sync continuously — on local saves, on changes to the remote, and every few seconds — until SIGINT or SIGTERM.",
        discussion: """
            Prints "groupstore: syncing DIR with REMOTE" on stderr once it is the group's syncing \
            member. If another process syncs the group, prints "groupstore: standing by (…)" and \
            takes over when that process ends, however it ends. A failed sync is retried with \
            backoff. Exit status 0 on SIGINT or SIGTERM.

            In text format, prints one line per sync that moved something or failed; in jsonl \
            format, one JSON object per event:
              {"event":"standby","holder":…}   {"event":"active"}
              {"event":"started","complete":…}
              {"event":"uploaded","count":…}   {"event":"fetched","count":…}
              {"event":"conflict","table":…,"record":…,
               "outcome":"server"|"client"|"merged"|"deleted"}
              {"event":"parked","table":…,"record":…,"reason":…}
              {"event":"zoneLeft","zone":"shared/…/…","count":…,"reason":…}
              {"event":"finished","uploaded":…,"fetched":…,"conflicts":…,
               "parked":…,"pending":…,"error":…|null,…}

            Example:
              groupstore cloud run --group /var/lib/app/group \\
                --remote /srv/cloud.sqlite --tables note,tag --format jsonl
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, jsonl
    }

    @OptionGroup var options: CloudOptions

    @Flag(name: .long, help: "Start with a full resync (see `cloud sync --complete`).")
    var complete = false

    @Option(name: .long, help: "Output format (jsonl: one JSON object per sync event).")
    var format: Format = .text

    func run() async throws {
        do {
            try await reportingFailure {
                let options = self.options
                let configuration = try await offThePool { try options.configuration() }
                let sync = CloudSync(configuration)
                if complete { sync.triggerSync(complete: true) }
                // Subscribed before the bridge runs, so its first events are printed.
                let printer = CloudEventPrinter(
                    events: sync.events(), format: format, group: configuration.group, remote: options.remoteDisplay)
                let printing = Task { await printer.run() }
                // The remote is a service too (its connections, its push
                // hints): started first and stopped last.
                let remote: [any Service] = [configuration.remote]
                do {
                    // Through a gateway, a token refused now may be renewed later (its file is read
                    // again): the bridge reports each failed sync and tries again with backoff.
                    if case .gateway = try RemoteArgument(options.remote) {} else { try await options.checkRole() }
                } catch {
                    printing.cancel()
                    throw error
                }
                let group = ServiceGroup(
                    configuration: .init(
                        services: remote + [sync], gracefulShutdownSignals: [.sigterm, .sigint], logger: configuration.logger))
                do {
                    try await group.run()
                } catch {
                    printing.cancel()
                    throw error
                }
                // The bridge ended its events when it stopped: every one is printed.
                await printing.value
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}

/// Prints the bridge's events: announcements on stderr, one line per sync
/// (text) or per event (jsonl) on stdout.
struct CloudEventPrinter: Sendable {
    let events: AsyncStream<CloudSyncEvent>
    let format: CloudRunCommand.Format
    let group: String
    let remote: String

    func run() async {
        var details: [CloudSyncEvent] = []
        // Announced at the first sync once active (the tables are checked before it starts).
        var announce = false
        for await event in events {
            switch event {
            case .active:
                announce = true
            case .started where announce:
                announce = false
                FileHandle.standardError.write(Data("groupstore: syncing \(group) with \(remote)\n".utf8))
            case .standby(let holder):
                FileHandle.standardError.write(Data("groupstore: standing by (\(holder)); taking over when it ends\n".utf8))
            default:
                break
            }
            switch format {
            case .jsonl:
                if let line = try? ReportJSON.line(ReportJSON.CloudEvent(event: event)) { StandardOutput.writeLine(line) }
            case .text:
                switch event {
                case .started: details = []
                case .conflict, .parked, .remoteReset, .schemaDrift, .movedOut: details.append(event)
                case .finished(let summary):
                    defer { details = [] }
                    // Syncs that found nothing to do, and one cut short by shutdown, are not news.
                    let idle = summary.uploaded == 0 && summary.fetched == 0 && summary.conflicts == 0 && summary.parked == 0
                    if (idle && summary.error == nil) || summary.errorCode == CloudSyncError.stopped.rawValue { continue }
                    let time = Self.clock.string(from: summary.finishedAt)
                    StandardOutput.writeLine("\(time) synced: \(summary.textLine(details: details))")
                default: break
                }
            }
        }
    }

    private static var clock: DateFormatter {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter
    }
}
