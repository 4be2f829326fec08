#if Gateway
    import Foundation

    /// How a gateway listens, whom it believes, and the limits a public
    /// endpoint needs.
    ///
    /// Each limit is kept by one type of `Limits/` or `Server/`, which the
    /// property's documentation names; a refusal is counted in
    /// `groupstore_gateway_refused_total` by its reason.
    public struct GatewayConfiguration: Sendable {
        /// The address to listen on (`127.0.0.1`, `0.0.0.0`, `::`).
        public var host: String
        /// The port (0: any free port, told by ``GatewayServer``'s `onListening`).
        public var port: Int
        /// The keys tokens are checked with.
        public var keys: GatewayKeys
        /// TLS: a PEM certificate chain and its private key (both, or neither).
        public var tlsCertificateFile: String?
        public var tlsKeyFile: String?
        /// The most bytes a request body may have (a batch of changes, an
        /// asset); past it, 413. (A modify takes fewer on a PostgreSQL backend:
        /// 400 changes and 2,000,000 estimated bytes, refused 413 naming the cap.)
        public var maxBodyBytes = 8 * 1024 * 1024
        /// The most bytes of request bodies the gateway holds in memory at
        /// once, all requests together: a request reserves its
        /// `Content-Length` (or ``maxBodyBytes`` when it sends none) before
        /// its body is read, and gives it back once answered; a request that
        /// finds no room is answered 503 with `Retry-After` (the bridge tries
        /// again). At least ``maxBodyBytes``.
        public var maxBodyMemoryBytes = 128 * 1024 * 1024
        /// Requests a verified identity (its role) may make per second, on
        /// average, and at once (a burst); past them, 429 with `Retry-After`.
        /// A push connection's `subscribe` frames count too.
        public var requestsPerSecond = 200.0
        public var burst = 400.0
        /// How long a request may take. At this deadline, the statement the
        /// request runs on PostgreSQL is aborted by the server
        /// (`statement_timeout`), its transaction rolled back, and the
        /// request answered 503 (try again); a request that committed is
        /// answered as such, however late. Its body must have arrived within
        /// it too.
        public var requestTimeout: TimeInterval = 30
        /// How long after ``requestTimeout`` a request whose database says
        /// nothing at all (not even the abort) is answered 503 anyway. Its
        /// outcome is then unknown: the bridge tries again, and the remote's
        /// conflict rules settle a write that was made twice.
        public var unansweredGrace: TimeInterval = 5
        /// How long a connection may take from its accept (its TLS handshake
        /// included) to the end of its first request's head; past it, the
        /// connection is closed (after a 408 when part of a request came).
        public var headerTimeout: TimeInterval = 10
        /// How long an HTTP connection may stay idle between requests before
        /// it is closed (the time to a later request's head).
        public var idleTimeout: TimeInterval = 120
        /// The most connections open at once (HTTP and push), never more than
        /// the process's open-file limit allows (less room for the database
        /// pool and the process's own files). At the cap, a new connection
        /// closes the connection idle the longest (one with no request under
        /// way: a request not sent yet, or kept alive between requests); when
        /// every connection is busy, the new one is closed.
        public var maxConnections = 10_000
        /// The most push connections one identity (its role) holds at once;
        /// past it, a new one is closed with code 4429.
        public var maxPushConnectionsPerIdentity = 64
        /// The most zones one push connection subscribes to.
        public var maxZonesPerConnection = 256
        /// Whether fetches share the database's answers (``FetchMemory``: one
        /// read of a commit for every reader, nothing read for a fetch that
        /// finds nothing new); off, every fetch reads the database (the
        /// benchmark's baseline).
        public var remembersFetches = true
        /// How often the clients' host reports are kept, together
        /// (``HostReports``): the fleet view shows a report up to this late.
        /// 0: each report in its own transaction, in its request (the
        /// benchmark's baseline).
        public var hostReportInterval: TimeInterval = 1

        public init(host: String = "127.0.0.1", port: Int = 8080, keys: GatewayKeys) {
            self.host = host
            self.port = port
            self.keys = keys
        }

        /// `HOST:PORT` (`[::1]:8443` for IPv6) read into ``host`` and ``port``.
        /// - Throws: ``GatewayError/Code/invalidConfiguration``.
        public static func parseListen(_ text: String) throws -> (host: String, port: Int) {
            guard let colon = text.lastIndex(of: ":"), colon > text.startIndex else {
                throw GatewayError(.invalidConfiguration, "--listen takes HOST:PORT (e.g. 127.0.0.1:8443), not \(String(reflecting: text))")
            }
            var host = String(text[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port), !host.isEmpty else {
                throw GatewayError(
                    .invalidConfiguration, "--listen takes HOST:PORT with a port from 0 to 65535, not \(String(reflecting: text))")
            }
            return (host, port)
        }

        /// Checks that the limits fit together.
        /// - Throws: ``GatewayError/Code/invalidConfiguration`` naming the value.
        public func validate() throws {
            func refuse(_ message: String) -> GatewayError { GatewayError(.invalidConfiguration, message) }
            guard maxBodyBytes > 0, requestsPerSecond > 0, burst >= 1 else {
                throw refuse("the body limit and the rate take numbers above 0 (and a burst of at least 1)")
            }
            guard maxBodyMemoryBytes >= maxBodyBytes else {
                throw refuse("the memory for request bodies (\(maxBodyMemoryBytes) bytes) is less than one body may have (\(maxBodyBytes))")
            }
            guard requestTimeout > 0, unansweredGrace >= 0, headerTimeout > 0, idleTimeout > 0 else {
                throw refuse("the request, header and idle timeouts take seconds above 0")
            }
            guard maxConnections >= 1, maxPushConnectionsPerIdentity >= 1, maxZonesPerConnection >= 1 else {
                throw refuse("the connection, push connection and zone limits take numbers of at least 1")
            }
            guard (0...3600).contains(hostReportInterval) else {
                throw refuse("the host reports' interval takes 0 to 3,600 seconds, not \(hostReportInterval)")
            }
        }
    }
#endif  // Gateway
