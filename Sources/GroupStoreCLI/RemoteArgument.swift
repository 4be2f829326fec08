import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import Logging

#if Postgres
    import GroupStoreCloudPostgres
#endif
#if Gateway
    import GroupStoreCloudHTTP
#endif

/// The `--remote REMOTE` argument: an embedded remote's file, a PostgreSQL
/// URL, or a gateway's http(s) URL.
enum RemoteArgument {
    static let help = ArgumentHelp(
        "The remote: a file path (an embedded remote, created if missing; its directory must exist), a postgres:// URL, or a gateway's http(s)://HOST:PORT (with --token-file).",
        valueName: "remote")

    case embedded(path: String)
    case postgres(url: String, display: String)
    case gateway(url: String)

    /// Says how to build a groupstore that has the gateway.
    static let gatewayNotBuilt = "this groupstore was built without the sync gateway: build it with --traits Gateway"

    init(_ text: String) throws {
        guard !text.isEmpty else { throw CommandFailure(message: "--remote must not be empty: give a file path or a postgres:// URL") }
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self = .postgres(url: text, display: Self.withoutPassword(text))
        } else if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            self = .gateway(url: text)
        } else if let colon = text.range(of: "://") {
            let scheme = text[..<colon.lowerBound]
            throw CommandFailure(
                message: "unknown remote \(Self.withoutPassword(text)): \(scheme):// is not a remote; "
                    + "give a file path (an embedded remote), a postgres:// URL or a gateway's http(s):// URL")
        } else {
            self = .embedded(path: text)
        }
    }

    /// Names the remote in messages.
    var display: String {
        switch self {
        case .embedded(let path): return path
        case .postgres(_, let display): return display
        case .gateway(let url): return url
        }
    }

    /// The remote, opened as `user` (an embedded remote's file is created if
    /// missing; a PostgreSQL remote's user is its role, a gateway's the role of
    /// its token, and their connections open when they run). Blocking (files
    /// are read): call it off the concurrency pool.
    func open(user: String, gateway: GatewayOptions, logger: Logger) throws -> any CloudDatabase {
        switch self {
        case .embedded(let path):
            return try EmbeddedRemote(
                path: path, user: user, faults: EmbeddedRemoteFaults(environment: ProcessInfo.processInfo.environment),
                logger: logger)
        case .postgres(let url, _):
            #if Postgres
                return try PostgresRemote(url: url, logger: logger)
            #else
                _ = url
                throw CommandFailure(message: "this groupstore was built without the PostgreSQL remote: build it with --traits Postgres")
            #endif
        case .gateway(let url):
            #if Gateway
                var configuration = GatewayRemote.Configuration(url: url, token: try gateway.token(), tokenFile: gateway.tokenFile)
                configuration.trustRoots = gateway.tlsCA
                return try GatewayRemote(configuration, logger: logger)
            #else
                _ = (url, gateway)
                throw CommandFailure(message: Self.gatewayNotBuilt)
            #endif
        }
    }

    /// Creates or upgrades the remote; one line saying what it is now.
    func setup() async throws -> String {
        switch self {
        case .embedded(let path): return try await offThePool { try EmbeddedRemote.setup(path: path) }
        case .postgres(let url, _):
            #if Postgres
                return try await PostgresRemote.setup(url: url)
            #else
                _ = url
                throw CommandFailure(message: "this groupstore was built without the PostgreSQL remote: build it with --traits Postgres")
            #endif
        case .gateway(let url):
            throw CommandFailure(
                message: "\(url) is a gateway: set up the database behind it with its postgres:// URL, as a role that may create the schema"
            )
        }
    }

    /// `url` with any password left out (see ``RemoteURL/withoutPassword(_:)``).
    static func withoutPassword(_ url: String) -> String { RemoteURL.withoutPassword(url) }
}
