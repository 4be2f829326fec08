import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud
import Logging
import ServiceLifecycle

/// `groupstore cloud share`: share a zone of yours with another user, stop
/// sharing it, or list the shares.
struct CloudShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share one of your zones with another user (read-only or read-write), stop sharing it, or list shares.",
        discussion: """
            A shared zone is named by its owner and a name (OWNER/NAME); it needs no creating. Groups \
            sync it with --shared-tables T --shared-zone OWNER/NAME. A user it is shared with \
            read-only gets its rows and cannot change them (their edits are parked and reported); \
            read-write, they change them as the owner does. --access none stops sharing it: the next \
            sync of that user's groups removes its rows from them. With PostgreSQL the database role \
            is the user, and the server enforces every rule (row-level security).

            Without --with, lists the shares of your zones and of the zones shared with you, one per \
            line: ZONE USER ACCESS.

            Example:
              groupstore cloud share --remote /srv/cloud.sqlite --user alice \\
                --zone family --with bob --access read-write
              groupstore cloud share --remote postgres://alice@db.example.com/app \\
                --zone family --with carol --access read-only
              groupstore cloud share --remote /srv/cloud.sqlite --user alice
            """
    )

    @Option(name: .long, help: RemoteArgument.help)
    var remote: String

    @Option(
        name: .long,
        help: ArgumentHelp("The account on an embedded remote (default: the Unix user running this).", valueName: "name"))
    var user: String?

    @Option(name: .long, help: ArgumentHelp("The zone's name: 1 to 63 of A-Z a-z 0-9 . _ -.", valueName: "name"))
    var zone: String?

    @Option(name: .long, help: ArgumentHelp("The user (with PostgreSQL: the role) to share it with.", valueName: "user"))
    var with: String?

    @Option(name: .long, help: ArgumentHelp("read-only, read-write, or none (stop sharing).", valueName: "access"))
    var access: String?

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level?

    @OptionGroup var gateway: GatewayOptions

    func validate() throws {
        if with != nil {
            guard zone != nil, access != nil else {
                throw ValidationError("--with needs --zone NAME and --access read-only|read-write|none")
            }
        } else if zone != nil || access != nil {
            throw ValidationError("--zone and --access need --with USER (without all three, share lists the shares)")
        }
        if let access, access != "none", CloudShareAccess(rawValue: access) == nil {
            throw ValidationError("unknown --access '\(access)': use read-only, read-write or none")
        }
    }

    func run() async throws {
        do {
            try await reportingFailure {
                let remoteArgument = try RemoteArgument(self.remote)
                let user = try self.user ?? CloudOptions.unixUser()
                LogSetup.bootstrap(level: logLevel ?? .warning)
                let logger = Logger(label: "groupstore.cloud")
                let gateway = self.gateway
                let remote = try await offThePool { try remoteArgument.open(user: user, gateway: gateway, logger: logger) }
                // The remote's connections live while it runs.
                let connections = Task { try? await remote.run() }
                defer { connections.cancel() }
                switch remoteArgument {
                case .postgres, .gateway: try await CloudOptions.check(user: self.user, isTheRoleOf: remote)
                case .embedded: break
                }
                if let member = with, let zone, let access {
                    try await remote.share(zone, with: member, access: CloudShareAccess(rawValue: access))
                    let owner = try await remote.account()
                    let name = CloudZone.shared(owner: owner, name: zone)
                    StandardOutput.writeLine(
                        access == "none" ? "\(name) is no longer shared with \(member)" : "\(name) is shared with \(member) \(access)")
                } else {
                    for share in try await remote.shares() {
                        StandardOutput.writeLine("\(share.zone) \(share.user) \(share.access.rawValue)")
                    }
                }
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
