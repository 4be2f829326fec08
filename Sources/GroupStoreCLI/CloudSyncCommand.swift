import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud
import ServiceLifecycle

/// `groupstore cloud sync`: one full sync now, as the group's syncing member.
struct CloudSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync once now: upload everything pending, fetch everything new, print a one-line summary.",
        discussion: """
            Runs as the group's syncing member `cloud`: it fails (exit status 1) if another process \
            is syncing this group (a `cloud run`). A sync that fails on the remote prints its \
            summary, then the failure on stderr, and exits 1; what it did not upload stays pending \
            for the next sync.

            With --format json, prints one object (times in Unix seconds):
              {"uploaded":…,"fetched":…,"conflicts":…,"parked":…,"pending":…,
               "error":…|null,"errorCode":…|null,"startedAt":…,"finishedAt":…}

            Example:
              groupstore cloud sync --group /var/lib/app/group \\
                --remote /srv/cloud.sqlite --tables note,tag \\
                --public-tables recipe --policy field-merge
            """
    )

    @OptionGroup var options: CloudOptions

    @Flag(name: .long, help: "A full resync: list every record again and compare every synced table with its last synced state.")
    var complete = false

    @OptionGroup var output: ReportFormatOption

    func run() async throws {
        do {
            try await reportingFailure {
                let options = self.options
                let configuration = try await offThePool { try options.configuration() }
                // The remote's connections live while it runs.
                let remote = configuration.remote
                let connections = Task { try? await remote.run() }
                defer { connections.cancel() }
                try await options.checkRole()
                let sync = CloudSync(configuration)
                // Conflicts and parked records, for the text line; the sync's last event is `finished`.
                let events = sync.events()
                let details = Task {
                    var seen: [CloudSyncEvent] = []
                    for await event in events {
                        switch event {
                        case .conflict, .parked, .remoteReset, .schemaDrift, .movedOut: seen.append(event)
                        case .finished: return seen
                        default: continue
                        }
                    }
                    return seen
                }
                let summary: CloudSyncSummary
                do {
                    summary = try await sync.syncOnce(complete: complete)
                } catch {
                    details.cancel()
                    throw error
                }
                if output.format == .json {
                    StandardOutput.writeLine(try ReportJSON.line(ReportJSON.CloudSummary(summary)))
                } else {
                    let line = summary.textLine(details: await details.value)
                    StandardOutput.writeLine("synced \(configuration.group) with \(options.remoteDisplay): \(line)")
                }
                details.cancel()
                if let error = summary.error { throw CommandFailure(message: error) }
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
