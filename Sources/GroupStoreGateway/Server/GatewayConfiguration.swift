#if Gateway
    import Foundation

    /// How a gateway listens, whom it believes, and the limits a public
    /// endpoint needs.
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
        /// The most bytes a request body may have (a batch of changes, an asset).
        public var maxBodyBytes = 8 * 1024 * 1024
        /// Requests a token may make per second, on average, and at once
        /// (a burst); past them, 429 with `Retry-After`.
        public var requestsPerSecond = 200.0
        public var burst = 400.0
        /// How long a request may take before it is answered 503 (try again).
        public var requestTimeout: TimeInterval = 30
        /// How long an HTTP connection may stay idle before it is closed.
        public var idleTimeout: TimeInterval = 120
        /// The most zones one push connection subscribes to.
        public var maxZonesPerConnection = 256

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
                throw GatewayError(.invalidConfiguration, "--listen takes HOST:PORT with a port from 0 to 65535, not \(String(reflecting: text))")
            }
            return (host, port)
        }
    }
#endif  // Gateway
