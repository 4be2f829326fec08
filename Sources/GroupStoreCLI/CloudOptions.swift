import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud
import Logging

#if Postgres
    import GroupStoreCloudPostgres
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The options `cloud sync` and `cloud run` share: which group, which
/// remote, which tables, as whom, and how conflicts are settled.
struct CloudOptions: ParsableArguments {
    /// Absolute and normalised (see ``GroupPath``).
    @Option(name: .long, help: GroupPath.help, transform: GroupPath.absolute)
    var group: String

    @Option(name: .long, help: RemoteArgument.help)
    var remote: String

    @OptionGroup var synced: CloudTableOptions

    @OptionGroup var subscriptions: SubscriptionOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The shared zone of --shared-tables: OWNER/NAME, one of yours or one shared with you (`groupstore cloud share`).",
            valueName: "owner/name"))
    var sharedZone: String?

    @Option(
        name: .long,
        help: ArgumentHelp("The account on an embedded remote (default: the Unix user running this).", valueName: "name"))
    var user: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How a conflict is settled: \(CloudConflictPolicy.names.joined(separator: ", ")).",
            valueName: "policy"))
    var policy: String = "server-wins"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "When the group synced as another user before: refuse (default: sync nothing, say so), purge (delete the synced rows here, edits not uploaded included, then fetch the new user's), upload (upload the rows here to the new user).",
            valueName: "refuse|purge|upload"))
    var onAccountChange: String = "refuse"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What this host is called in the fleet view, `cloud fleet` (default: the machine's name and the group's path).",
            valueName: "name"))
    var hostName: String?

    @Option(name: .long, help: ArgumentHelp("The app's version, for the fleet view (`cloud fleet`).", valueName: "version"))
    var appVersion: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds after which a host with nothing new reports itself to the fleet view anyway (default 60).", valueName: "seconds"))
    var reportEvery: Double?

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level?

    @OptionGroup var gateway: GatewayOptions

    /// The configuration, with logging bootstrapped once and the remote
    /// opened (an embedded remote's file is created if missing). Blocking.
    func configuration() throws -> CloudSyncConfiguration {
        guard synced.namesAny else {
            throw CommandFailure(
                message:
                    "no tables to sync: give --tables A,B (private), --public-tables C (public) or --shared-tables D (shared), or several")
        }
        let sharedZone = try Self.sharedZone(self.sharedZone, tables: CloudTableOptions.list(synced.sharedTables))
        guard let policy = CloudConflictPolicy(name: policy) else {
            throw CommandFailure(
                message: "unknown --policy '\(self.policy)': use one of \(CloudConflictPolicy.names.joined(separator: ", "))")
        }
        guard let accountChange = CloudSyncConfiguration.AccountChange(rawValue: onAccountChange) else {
            throw CommandFailure(message: "unknown --on-account-change '\(onAccountChange)': use one of refuse, purge, upload")
        }
        let assets = try synced.assets()
        let remote = try RemoteArgument(self.remote)
        try Self.checkGroup(group)
        let user = try self.user ?? Self.unixUser()
        LogSetup.bootstrap(level: logLevel ?? .warning)
        let logger = Logger(label: "groupstore.cloud")
        var configuration = CloudSyncConfiguration(
            group: group, remote: try remote.open(user: user, gateway: gateway, logger: logger), logger: logger)
        synced.apply(to: &configuration, assets: assets)
        try subscriptions.apply(to: &configuration)
        configuration.sharedZone = sharedZone
        configuration.policy = policy
        configuration.accountChange = accountChange
        if let hostName {
            guard !hostName.isEmpty, hostName.utf8.count <= CloudHostReport.limits.host else {
                throw CommandFailure(message: "--host-name takes 1 to \(CloudHostReport.limits.host) bytes")
            }
            configuration.hostName = hostName
        }
        configuration.appVersion = appVersion
        if let reportEvery {
            guard reportEvery > 0, reportEvery.isFinite else {
                throw CommandFailure(message: "--report-every takes a number of seconds above 0")
            }
            configuration.reportInterval = reportEvery
        }
        // A test hook, as GROUPSTORE_REMOTE_FAULTS is: this host's clock skewed (what faketime does).
        if let skew = ProcessInfo.processInfo.environment["GROUPSTORE_CLOCK_SKEW"].flatMap(Double.init) { configuration.clockSkew = skew }
        return configuration
    }

    /// A PostgreSQL server can be reached and the role may sync (checked
    /// first, so an unreachable server fails at once rather than after the
    /// bridge's retries); with PostgreSQL the database role is the user:
    /// `--user`, if given, must name it.
    func checkRole() async throws {
        let argument = try RemoteArgument(remote)
        if case .gateway = argument {
            let remote = try await offThePool { [gateway] in
                try argument.open(user: "", gateway: gateway, logger: Logger(label: "groupstore.cloud"))
            }
            try await Self.check(user: user, isTheRoleOf: remote)
            return
        }
        guard case .postgres(let url, _) = argument else { return }
        #if Postgres
            let remote = try PostgresRemote(url: url, logger: Logger(label: "groupstore.cloud"))
            let connections = Task { try? await remote.run() }
            defer { connections.cancel() }
            try await Self.check(user: user, isTheRoleOf: remote)
        #else
            _ = url
            throw CommandFailure(message: "this groupstore was built without the PostgreSQL remote: build it with --traits Postgres")
        #endif
    }

    /// With PostgreSQL the database role is the user: `user`, if given, must
    /// name the role `remote` logs in as.
    static func check(user: String?, isTheRoleOf remote: any CloudDatabase) async throws {
        let role = try await remote.account()
        guard let user else { return }
        guard role == user else {
            throw CommandFailure(
                message:
                    "--user \(user) is not the role \(role) that \(remote.displayName) acts as: with PostgreSQL the database role is the user"
            )
        }
    }

    /// The remote as given, for messages.
    var remoteDisplay: String {
        (try? RemoteArgument(remote).display) ?? remote
    }

    /// `alice/family` → the shared zone `family` of `alice`; required with
    /// shared tables, refused without them.
    static func sharedZone(_ text: String?, tables: [String]) throws -> CloudZone? {
        guard let text else {
            if tables.isEmpty { return nil }
            throw CommandFailure(
                message: "--shared-tables \(tables.joined(separator: ",")) needs --shared-zone OWNER/NAME: the zone their rows live in")
        }
        guard !tables.isEmpty else {
            throw CommandFailure(message: "--shared-zone \(text) is given but no --shared-tables: name the tables whose rows live in it")
        }
        guard let zone = CloudZone(description: "shared/" + text) else {
            throw CommandFailure(
                message: "--shared-zone takes OWNER/NAME (the name 1 to 63 of A-Z a-z 0-9 . _ -), not '\(text)'")
        }
        return zone
    }

    /// A group to sync must exist, with its database: the synced tables are
    /// read from it (opening it would otherwise create an empty group at a
    /// mistyped path).
    static func checkGroup(_ group: String) throws {
        var info = stat()
        guard stat(group, &info) == 0 else {
            let reason = errno == ENOENT ? "no such directory" : String(cString: strerror(errno))
            throw CommandFailure(
                message: "no group at \(group) (\(reason)): create it and its tables first, e.g. with groupstore exec --group \(group)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw CommandFailure(message: "\(group) is not a directory, so it is not a group")
        }
        guard access(group + "/store.sqlite", F_OK) == 0 else {
            if errno == EACCES {
                throw CommandFailure(message: "cannot read group \(group): permission denied")
            }
            throw CommandFailure(
                message:
                    "no group at \(group) (no store.sqlite in it): create it and its tables first, e.g. with groupstore exec --group \(group)"
            )
        }
    }

    /// The name of the Unix user this process runs as.
    static func unixUser() throws -> String {
        let uid = geteuid()
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name, name.pointee != 0 else {
            throw CommandFailure(message: "cannot tell the name of Unix user \(uid): give the account with --user NAME")
        }
        return String(cString: name)
    }
}
