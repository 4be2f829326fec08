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

    #if canImport(Glibc)
        import Glibc
    #endif

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
    /// A `Service`: ``run()`` runs the backend, the push hub, the host
    /// reports' keeping (``HostReports``) and the HTTP server until graceful
    /// shutdown (the server stops first, the backend last).
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
    ///
    /// Its limits (``GatewayConfiguration``) are kept in two places: the
    /// connections by ``GuardedChannel`` (how many, how long to a first
    /// request, what the decoder cannot read), the requests by the API's
    /// middleware (``GatewayRoutes``: token, rate, body size and memory,
    /// deadline).
    public final class GatewayServer: Service {
        public let configuration: GatewayConfiguration
        public let backend: any GatewayBackend
        let logger: Logger
        let authenticator: Authenticator
        let limiter: RateLimiter
        let bodies: BodyBudget
        let connections: ConnectionCap
        let metrics = GatewayMetrics()
        let hub: PushHub
        /// The database's answers to fetches, shared by fetches of the same request and reader.
        let fetchMemory: FetchMemory
        /// The fetch of the API's routes and of the push connections' prefetches.
        let fetch: GatewayFetch
        /// The clients' host reports, kept together once a second.
        let reports: HostReports
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
            authenticator = Authenticator(verifier: TokenVerifier(keys: configuration.keys))
            limiter = RateLimiter(rate: configuration.requestsPerSecond, burst: configuration.burst)
            bodies = BodyBudget(capacity: configuration.maxBodyMemoryBytes)
            connections = ConnectionCap(limit: Self.connectionLimit(configuration.maxConnections, poolSize: backend.poolUse.size))
            fetchMemory = FetchMemory(backend: backend)
            fetch = GatewayFetch(fetchMemory: fetchMemory, metrics: metrics, remembers: configuration.remembersFetches)
            reports = HostReports(backend: backend, logger: logger, interval: .seconds(configuration.hostReportInterval))
            hub = PushHub(
                backend: backend, metrics: metrics, logger: logger, maxZones: configuration.maxZonesPerConnection,
                maxPerIdentity: configuration.maxPushConnectionsPerIdentity, limiter: limiter, fetchMemory: fetchMemory, fetch: fetch,
                timeout: configuration.requestTimeout, grace: configuration.unansweredGrace)
        }

        /// Runs until cancelled or shut down gracefully.
        /// - Throws: ``GatewayError/Code/invalidConfiguration`` for a
        ///   configuration whose limits do not fit together or TLS files that
        ///   cannot be read; the server's error if it cannot listen.
        public func run() async throws {
            try configuration.validate()
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
                configuration: .init(services: [backend, hub, reports, gauges, application], logger: quiet(below: .notice)))
            try await group.run()
        }

        /// HTTP/1.1 with WebSocket upgrades at `/v1/push`, each connection
        /// guarded (``GuardedChannel``), in TLS when configured.
        ///
        /// A push upgrade whose token or role is refused is accepted and closed
        /// at once with the refusal's ``PushCloseCode`` and sentence:
        /// hummingbird-websocket answers a refused upgrade with a bare 400 and
        /// has no way to say why.
        private func serverBuilder() throws -> HTTPServerBuilder {
            let idle = TimeAmount.milliseconds(Int64(configuration.idleTimeout * 1000))
            let upgradeConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
                http1: .init(idleTimeout: idle), ws: .init(maxFrameSize: 1 << 16, autoPing: .enabled(timePeriod: .seconds(30))))
            let (connections, metrics) = (connections, metrics)
            let headerTimeout = TimeAmount.milliseconds(Int64(configuration.headerTimeout * 1000))
            let plain = HTTPServerBuilder { responder in
                // A connection is busy while a request is answered, waiting between requests.
                let tracked: HTTPChannelHandler.Responder = { request, writer, channel in
                    connections.busy(channel)
                    defer { connections.waiting(channel) }
                    try await responder(request, writer, channel)
                }
                let http = HTTP1WebSocketUpgradeChannel(responder: tracked, configuration: upgradeConfiguration) { [self] request, _, _ in
                    let path = request.path?.split(separator: "?").first
                    guard path == Substring(GatewayWire.apiPrefix + "/push") else { return .dontUpgrade }
                    let identity = Result { try authenticator.identity(request.headerFields) }
                    let origin = GatewayRoutes.origin(request.headerFields) ?? ""
                    return .upgrade([:]) { inbound, outbound, _ in
                        switch identity {
                        case .success(let identity):
                            await self.hub.serve(identity: identity, origin: origin, inbound: inbound, outbound: outbound)
                        case .failure(let error):
                            await PushHub.refuse(outbound, error, metrics: metrics)
                        }
                    }
                }
                return GuardedChannel(base: http, cap: connections, headerTimeout: headerTimeout, metrics: metrics)
            }
            guard configuration.tlsCertificateFile != nil || configuration.tlsKeyFile != nil else { return plain }
            guard let certificate = configuration.tlsCertificateFile, let key = configuration.tlsKeyFile else {
                throw GatewayError(.invalidConfiguration, "TLS needs both --tls-cert and --tls-key")
            }
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
                let tls = TLSConfiguration.makeServerConfiguration(
                    certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
                return try HTTPServerBuilder.tls(plain, tlsConfiguration: tls)
            } catch {
                throw GatewayError(
                    .invalidConfiguration, "cannot use TLS certificate \(certificate) with key \(key): \(error)", underlying: error)
            }
        }

        /// The most connections to admit: `configured`, or fewer when the
        /// process's open-file limit would not hold them beside the database
        /// pool, its listener and the process's own files (64).
        static func connectionLimit(_ configured: Int, poolSize: Int) -> Int {
            var limit = rlimit()
            guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return configured }
            let room = Int(clamping: limit.rlim_cur) - 64 - poolSize - 1
            return max(1, min(configured, room))
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
