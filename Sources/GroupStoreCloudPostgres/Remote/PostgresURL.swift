#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO

    /// A `postgres://` / `postgresql://` URL as libpq reads it: user, password
    /// (or `PGPASSWORD`),
    /// host and port (or a Unix socket directory: `?host=/dir`, or a host that
    /// starts with `/`), database, and `sslmode` / `sslrootcert`.
    ///
    /// ```
    /// postgres://alice:secret@db.example.com:5432/app?sslmode=verify-full
    /// postgres://alice@/app?host=/run/postgresql
    /// ```
    public struct PostgresURL: Sendable, CustomStringConvertible {
        /// The role: the URL's user, `?user=`, or `$USER`.
        public var user: String
        /// The password, if any (never shown in ``description``).
        public var password: String?
        /// A host name, or `nil` for a Unix socket.
        public var host: String?
        /// The socket's directory, for a Unix socket.
        public var socketDirectory: String?
        /// The port (5432 unless given); for a Unix socket it names the socket file.
        public var port: Int
        /// The database: the URL's path, `?dbname=`, or the user's name.
        public var database: String
        /// `disable`, `allow`, `prefer` (the default over TCP), `require`,
        /// `verify-ca` or `verify-full`.
        public var sslMode: String
        /// A file of trusted CA certificates (PEM), for `verify-ca` / `verify-full`.
        public var sslRootCertificate: String?

        /// The URL as given, without its password: how it is named in messages and logs.
        public var description: String { given }

        /// The URL as given, less any password.
        private let given: String

        /// Parses `text`.
        /// - Throws: ``CloudSyncError/Code/badRemote`` naming what is wrong (the
        ///   message never contains the password).
        public init(_ text: String) throws {
            let lowered = text.lowercased()
            guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else {
                throw CloudSyncError(.badRemote, "\(Self.redacted(text)) is not a postgres:// or postgresql:// URL")
            }
            guard let components = URLComponents(string: text) else {
                throw CloudSyncError(
                    .badRemote,
                    "\(Self.redacted(text)) is not a valid URL (percent-encode special characters in the user, password and path)")
            }
            var query: [String: String] = [:]
            for item in components.queryItems ?? [] { query[item.name.lowercased()] = item.value ?? "" }
            let known: Set = [
                "host", "port", "user", "password", "dbname", "sslmode", "sslrootcert", "application_name", "connect_timeout",
            ]
            if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
                throw CloudSyncError(
                    .badRemote, "\(Self.redacted(text)): unknown parameter \(unknown) (known: \(known.sorted().joined(separator: ", ")))")
            }
            let user = query["user"] ?? components.user ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
            guard !user.isEmpty else { throw CloudSyncError(.badRemote, "\(Self.redacted(text)) names no user") }
            self.user = user
            // As libpq: the URL's password, else the PGPASSWORD environment variable (which
            // keeps it out of a process's arguments, which every local user can read).
            self.password = query["password"] ?? components.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"]
            let hostText = query["host"] ?? components.host.flatMap { $0.removingPercentEncoding } ?? ""
            if hostText.isEmpty || hostText.hasPrefix("/") {
                host = nil
                socketDirectory = hostText.isEmpty ? "/var/run/postgresql" : hostText
            } else {
                host = hostText
                socketDirectory = nil
            }
            let portText = query["port"] ?? components.port.map(String.init) ?? "5432"
            guard let port = Int(portText), (1...65535).contains(port) else {
                throw CloudSyncError(.badRemote, "\(Self.redacted(text)): port \(portText) is not a port number")
            }
            self.port = port
            let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            database = query["dbname"] ?? (path.isEmpty ? user : path)
            sslMode = query["sslmode"] ?? (host == nil ? "disable" : "prefer")
            let modes = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]
            guard modes.contains(sslMode) else {
                throw CloudSyncError(
                    .badRemote, "\(Self.redacted(text)): sslmode \(sslMode) is not one of \(modes.joined(separator: ", "))")
            }
            sslRootCertificate = query["sslrootcert"]
            given = RemoteURL.withoutPassword(text)
        }

        /// Whether and how to use TLS: `nil` for none; `required` or preferred.
        private func tlsSetting() -> (configuration: TLSConfiguration, required: Bool)? {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let sslRootCertificate { configuration.trustRoots = .file(sslRootCertificate) }
            switch sslMode {
            case "disable": return nil
            case "allow", "prefer":
                configuration.certificateVerification = .none
                return (configuration, false)
            case "require":
                // libpq's `require` encrypts without checking the certificate
                // (unless a root certificate is given).
                if sslRootCertificate == nil { configuration.certificateVerification = .none }
                return (configuration, true)
            case "verify-ca":
                configuration.certificateVerification = .noHostnameVerification
                return (configuration, true)
            default:
                return (configuration, true)
            }
        }

        /// The pool's configuration: at most `maximumConnections` connections.
        func clientConfiguration(maximumConnections: Int = 4) -> PostgresClient.Configuration {
            var configuration: PostgresClient.Configuration
            if let host {
                let tls: PostgresClient.Configuration.TLS =
                    tlsSetting().map { $0.required ? .require($0.configuration) : .prefer($0.configuration) } ?? .disable
                configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
            } else {
                configuration = .init(
                    unixSocketPath: "\(socketDirectory ?? "")/.s.PGSQL.\(port)", username: user, password: password, database: database)
            }
            configuration.options.connectTimeout = .seconds(10)
            configuration.options.maximumConnections = maximumConnections
            return configuration
        }

        /// One connection's configuration (the listener's, and setup's).
        func connectionConfiguration() throws -> PostgresConnection.Configuration {
            var configuration: PostgresConnection.Configuration
            if let host {
                var tls = PostgresConnection.Configuration.TLS.disable
                if let setting = tlsSetting() {
                    let context = try NIOSSLContext(configuration: setting.configuration)
                    tls = setting.required ? .require(context) : .prefer(context)
                }
                configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
            } else {
                configuration = .init(
                    unixSocketPath: "\(socketDirectory ?? "")/.s.PGSQL.\(port)", username: user, password: password, database: database)
            }
            configuration.options.connectTimeout = .seconds(10)
            return configuration
        }

        /// `text` without a password, for messages about a URL that did not parse.
        static func redacted(_ text: String) -> String {
            guard let components = URLComponents(string: text), components.password != nil else {
                if let at = text.lastIndex(of: "@"), let scheme = text.range(of: "://"), scheme.upperBound < at {
                    let userInfo = text[scheme.upperBound..<at]
                    let user = userInfo.split(separator: ":", maxSplits: 1).first ?? ""
                    return String(text[..<scheme.upperBound]) + user + String(text[at...])
                }
                return text
            }
            var copy = components
            copy.password = nil
            return copy.string ?? text
        }
    }
#endif  // Postgres
