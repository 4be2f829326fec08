#if Gateway
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import HTTPTypes
    import Hummingbird
    import HummingbirdCore
    import HummingbirdTLS
    import HummingbirdWebSocket
    import Logging
    import NIOCore
    import NIOSSL
    import ServiceLifecycle

    /// A sync gateway (`groupstore serve`): the bridge's remote operations over
    /// HTTP(S), each run as the database role its bearer token names, and push
    /// hints over WebSocket, on Hummingbird 2.
    ///
    /// ```
    /// bridges ── https + bearer JWT ──▶ GatewayServer ── GatewayBackend ──▶ PostgreSQL
    ///         ◀── push hints (WebSocket) ── PushHub ◀── one LISTEN ─────────┘
    /// ```
    ///
    /// It holds no session: any gateway serves any request, so several run
    /// side by side behind a load balancer (or a client's list of gateways).
    ///
    /// A `Service`: ``run()`` runs the backend, the push hub and the HTTP
    /// server until graceful shutdown (the server stops first, the backend last).
    ///
    /// ```swift
    /// let keys = try GatewayKeys(secretFiles: ["/etc/groupstore/jwt.secret"])
    /// let backend = try PostgresGatewayBackend(url: "postgres://authenticator@db/app", poolSize: 10, logger: logger)
    /// let gateway = GatewayServer(
    ///     configuration: GatewayConfiguration(host: "0.0.0.0", port: 8443, keys: keys), backend: backend, logger: logger)
    /// try await ServiceGroup(services: [gateway], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
    /// ```
    ///
    /// Endpoints beside the remote's (``GatewayWire``): `GET /health` (200 while
    /// it runs) and `GET /ready` (200 when the database answers and the listener
    /// is connected, else 503).
    public final class GatewayServer: Service {
        public let configuration: GatewayConfiguration
        public let backend: any GatewayBackend
        let logger: Logger
        let verifier: TokenVerifier
        let limiter: RateLimiter
        let metrics = GatewayMetrics()
        let hub: PushHub
        let onListening: @Sendable (_ host: String, _ port: Int) async -> Void

        /// - Parameter onListening: called once the server listens, with its
        ///   address and port (the port chosen when ``GatewayConfiguration/port`` is 0).
        public init(
            configuration: GatewayConfiguration, backend: any GatewayBackend, logger: Logger = Logger(label: "GroupStoreGateway"),
            onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
        ) {
            self.configuration = configuration
            self.backend = backend
            self.logger = logger
            self.onListening = onListening
            verifier = TokenVerifier(keys: configuration.keys)
            limiter = RateLimiter(rate: configuration.requestsPerSecond, burst: configuration.burst)
            hub = PushHub(backend: backend, metrics: metrics, logger: logger, maxZones: configuration.maxZonesPerConnection)
        }

        /// Runs until cancelled or shut down gracefully.
        /// - Throws: ``GatewayError/Code/invalidConfiguration`` for TLS files
        ///   that cannot be read; the server's error if it cannot listen.
        public func run() async throws {
            let application = Application(
                router: GatewayRoutes(server: self).router(),
                server: try serverBuilder(),
                configuration: ApplicationConfiguration(
                    address: .hostname(configuration.host, port: configuration.port), serverName: "GroupStore-gateway"),
                onServerRunning: { [onListening, configuration] channel in
                    await onListening(configuration.host, channel.localAddress?.port ?? configuration.port)
                },
                logger: quiet(below: .warning))
            let gauges = PoolGauges(backend: backend, metrics: metrics)
            let group = ServiceGroup(
                configuration: .init(services: [backend, hub, gauges, application], logger: quiet(below: .notice)))
            try await group.run()
        }

        /// HTTP/1.1 with WebSocket upgrades at `/v1/push`, in TLS when configured.
        private func serverBuilder() throws -> HTTPServerBuilder {
            let idle = TimeAmount.milliseconds(Int64(configuration.idleTimeout * 1000))
            let plain = HTTPServerBuilder.http1WebSocketUpgrade(
                configuration: .init(
                    http1: .init(idleTimeout: idle),
                    ws: .init(maxFrameSize: 1 << 16, autoPing: .enabled(timePeriod: .seconds(30)))
                )
            ) { [self] request, _, _ in
                guard request.path?.split(separator: "?").first == Substring(GatewayWire.apiPrefix + "/push"),
                    let identity = try? authenticate(request.headerFields)
                else { return .dontUpgrade }
                let origin = GatewayRoutes.origin(request.headerFields) ?? ""
                return .upgrade([:]) { inbound, outbound, _ in
                    await self.hub.serve(
                        role: identity.role, origin: origin, expiresAt: identity.expiresAt, inbound: inbound, outbound: outbound)
                }
            }
            guard configuration.tlsCertificateFile != nil || configuration.tlsKeyFile != nil else { return plain }
            guard let certificate = configuration.tlsCertificateFile, let key = configuration.tlsKeyFile else {
                throw GatewayError(.invalidConfiguration, "TLS needs both --tls-cert and --tls-key")
            }
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
                let tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
                return try HTTPServerBuilder.tls(plain, tlsConfiguration: tls)
            } catch {
                throw GatewayError(
                    .invalidConfiguration, "cannot use TLS certificate \(certificate) with key \(key): \(error)", underlying: error)
            }
        }

        /// The identity the `Authorization: Bearer` header's token proves.
        /// - Throws: ``GatewayError/Code/unauthenticated``, saying why in one line.
        func authenticate(_ headers: HTTPFields) throws -> GatewayIdentity {
            guard let value = headers[.authorization] else {
                throw GatewayError(.unauthenticated, "no token: send Authorization: Bearer TOKEN")
            }
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw GatewayError(.unauthenticated, "the Authorization header is not Bearer TOKEN")
            }
            return try verifier.verify(String(parts[1]).trimmingCharacters(in: .whitespaces))
        }

        func quiet(below level: Logger.Level) -> Logger {
            var quiet = logger
            quiet.logLevel = max(logger.logLevel, level)
            return quiet
        }
    }

    /// Records the pool's use every second, while the gateway runs.
    struct PoolGauges: Service {
        let backend: any GatewayBackend
        let metrics: GatewayMetrics

        func run() async throws {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    let use = backend.poolUse
                    metrics.pool(leases: use.leases, size: use.size)
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
#endif  // Gateway
