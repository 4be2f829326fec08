import ArgumentParser
import Foundation
import GroupStoreCloud
import Logging

#if Postgres
    import GroupStoreCloudPostgres
#endif

/// `groupstore cloud fleet`: every host's last report, as the remote's operator sees it.
struct CloudFleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "List every host that syncs with a PostgreSQL remote: last seen, how far behind, what waits on it, its last error.",
        discussion: """
            Each bridge reports itself to the remote after a sync when something changed, and at \
            least every --report-every seconds of cloud run/sync (60 by default) while it runs \
            (CloudHostReport); how far it has read, when nothing else changed, at most every 5 s. \
            Run this as the schema's owner: \
            other roles see their own hosts only.

            Columns: USER (a role, or device+NAME), HOST, VERSION, SEEN (seconds since its last \
            report), BEHIND (changes logged in its zones after what it has read, of records another \
            user wrote last), LAG (seconds it \
            has been behind: since its last sync that did not fail), PENDING, PARKED, STATE \
            (error, silent, parked, pending, behind, or ok), and its last error. SILENT means no \
            report for --silent-after seconds: the host stopped, or cannot reach the remote.

            Example:
              groupstore cloud fleet --remote postgres://admin@db.example.com/app --format json
            """
    )

    @Option(name: .long, help: ArgumentHelp("The PostgreSQL remote (postgres://…), as the schema's owner.", valueName: "url"))
    var remote: String

    @Option(name: .long, help: ArgumentHelp("Seconds without a report after which a host is silent.", valueName: "seconds"))
    var silentAfter: Double = 180

    @OptionGroup var output: ReportFormatOption

    func validate() throws {
        guard silentAfter > 0 else { throw ValidationError("--silent-after takes a number of seconds above 0") }
    }

    func run() async throws {
        do {
            try await reportingFailure {
                guard case .postgres(let url, _) = try RemoteArgument(self.remote) else {
                    throw CommandFailure(
                        message: "cloud fleet reads a PostgreSQL remote: give its postgres:// URL (\(self.remote) is not one)")
                }
                #if Postgres
                    let remote = try PostgresRemote(url: url, logger: Logger(label: "groupstore.cloud"))
                    let connections = Task { try? await remote.run() }
                    defer { connections.cancel() }
                    let fleet = try await remote.fleet()
                    switch output.format {
                    case .json: StandardOutput.writeLine(try Self.json(fleet, silentAfter: silentAfter))
                    case .text: for line in Self.table(fleet, silentAfter: silentAfter) { StandardOutput.writeLine(line) }
                    }
                #else
                    _ = url
                    throw CommandFailure(
                        message: "this groupstore was built without the PostgreSQL remote: build it with --traits Postgres")
                #endif
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }

    /// The fleet as aligned columns, a host a line.
    static func table(_ fleet: CloudFleet, silentAfter: Double) -> [String] {
        let header = ["USER", "HOST", "VERSION", "SEEN", "BEHIND", "LAG", "PENDING", "PARKED", "STATE", "LAST ERROR"]
        let whole = { (seconds: Double) in seconds.isFinite ? String(Int(seconds.rounded())) : "-" }
        let rows = fleet.hosts.map { host in
            [
                host.user, host.host, host.appVersion ?? "-", whole(fleet.now.timeIntervalSince(host.seenAt)),
                String(host.behind), whole(host.lag(now: fleet.now)), String(host.pending), String(host.parked),
                host.states(now: fleet.now, silentAfter: silentAfter).joined(separator: ","),
                host.lastError.map { String($0.prefix(120)) } ?? "-",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.indices.map { column in
                column == row.count - 1 ? row[column] : row[column].padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }

    /// The fleet as one JSON object: `now`, and `hosts` with their lag and states.
    static func json(_ fleet: CloudFleet, silentAfter: Double) throws -> String {
        let formatter = ISO8601DateFormatter()
        func orNull(_ value: String?) -> Any { value.map { $0 as Any } ?? NSNull() }
        let hosts: [[String: Any]] = fleet.hosts.map { host in
            [
                "user": host.user, "host": host.host, "appVersion": orNull(host.appVersion), "pending": host.pending,
                "parked": host.parked, "lastError": orNull(host.lastError),
                "syncedAt": orNull(host.syncedAt.map { formatter.string(from: $0) }), "seenAt": formatter.string(from: host.seenAt),
                "secondsSinceSeen": (fleet.now.timeIntervalSince(host.seenAt) * 10).rounded() / 10, "behind": host.behind,
                "lagSeconds": (host.lag(now: fleet.now) * 10).rounded() / 10,
                "states": host.states(now: fleet.now, silentAfter: silentAfter),
            ]
        }
        let object: [String: Any] = ["now": formatter.string(from: fleet.now), "hosts": hosts]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
