import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import Logging

#if Postgres
    import GroupStoreCloudPostgres
#endif

/// The `--remote REMOTE` argument: an embedded remote's file, or a
/// PostgreSQL URL.
enum RemoteArgument {
    static let help = ArgumentHelp(
        "The remote: a file path (an embedded remote, created if missing; its directory must exist) or a postgres:// URL.",
        valueName: "remote")

    case embedded(path: String)
    case postgres(url: String, display: String)

    init(_ text: String) throws {
        guard !text.isEmpty else { throw CommandFailure(message: "--remote must not be empty: give a file path or a postgres:// URL") }
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self = .postgres(url: text, display: Self.withoutPassword(text))
        } else if let colon = text.range(of: "://") {
            let scheme = text[..<colon.lowerBound]
            throw CommandFailure(
                message: "unknown remote \(Self.withoutPassword(text)): \(scheme):// is not a remote; "
                    + "give a file path (an embedded remote) or a postgres:// URL")
        } else {
            self = .embedded(path: text)
        }
    }

    /// Names the remote in messages.
    var display: String {
        switch self {
        case .embedded(let path): return path
        case .postgres(_, let display): return display
        }
    }

    /// The remote, opened as `user` (an embedded remote's file is created if
    /// missing; a PostgreSQL remote's user is its role, and its connections
    /// open when it runs). Blocking: call it off the concurrency pool.
    func open(user: String, logger: Logger) throws -> any CloudDatabase {
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
        }
    }

    /// `url` with any password left out (see ``RemoteURL/withoutPassword(_:)``).
    static func withoutPassword(_ url: String) -> String { RemoteURL.withoutPassword(url) }
}
