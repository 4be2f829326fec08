import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud

/// `groupstore cloud status`: the sync state of a group.
struct CloudStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether a syncing member is live, pending uploads, parked records, conflicts and the last sync.",
        discussion: """
            Reads the group only (no remote needed). A group never synced shows zeros and no last \
            sync.

            With --format json, prints one object:
              {"group":…,"live":…,"account":…|null,"pending":…,"transactionsNotTakenIn":…,"parked":…,
               "conflicts":…,"lastSync":{…as cloud sync --format json…}|null,
               "parkedRecords":[{"table":…,"record":…,"direction":"up"|"down",
                                 "reason":…}],
               "remoteReset":{"kind":"replaced"|"restored","message":…,"at":…}|null,
               "schemaDrift":[{"table":…,"column":…,"seenAt":…}],
               "subscriptions":[{"table":…,"filter":…,"rows":…}]}

            Example:
              groupstore cloud status --group /var/lib/app/group --format json
            """
    )

    @OptionGroup var options: GroupOption

    @OptionGroup var output: ReportFormatOption

    func run() async throws {
        do {
            try await reportingFailure {
                let group = options.group
                try CloudOptions.checkGroup(group)
                let status = try await offThePool { try CloudSyncStatus.read(group: group) }
                if output.format == .json {
                    StandardOutput.writeLine(try ReportJSON.line(ReportJSON.CloudStatus(status)))
                    return
                }
                var lines = [
                    "group \(status.group): "
                        + (status.live ? "a syncing member is live" : "no syncing member running")
                        + (status.account.map { ", account \($0)" } ?? ", never synced"),
                    "pending uploads \(status.pending) (and \(status.transactionsNotTakenIn) transactions not taken in yet), "
                        + "parked \(status.parked), conflicts settled \(status.conflicts)",
                ]
                if let last = status.lastSync {
                    let when = ISO8601DateFormatter().string(from: last.finishedAt)
                    lines.append("last sync \(when): \(last.textLine(details: []))")
                } else {
                    lines.append("last sync: none")
                }
                for record in status.parkedRecords {
                    lines.append("  parked \(record.table)/\(record.record) (\(record.direction)): \(record.reason)")
                }
                if let reset = status.remoteReset {
                    lines.append("remote \(reset.kind.rawValue) (found \(ISO8601DateFormatter().string(from: reset.at))): \(reset.message)")
                }
                for drift in status.schemaDrift {
                    lines.append(
                        "schema drift: the remote's records of table \(drift.table) have column \(drift.column), which the table here lacks (kept on the remote, not applied here)"
                    )
                }
                for subscription in status.subscriptions {
                    lines.append("subscription of \(subscription.table): \(subscription.filter) (\(subscription.rows) rows held)")
                }
                StandardOutput.writeLine(lines.joined(separator: "\n"))
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
