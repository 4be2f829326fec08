import ArgumentParser
import Foundation
import GroupStore
import Logging
import ServiceLifecycle
import UnixSignals

#if Gateway
    import GroupStoreGateway
#endif

/// `groupstore serve`: run a sync gateway until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a sync gateway: bridges sync through it over HTTP(S), each request as the database role its token names.",
        discussion: """
            The gateway logs in to PostgreSQL as POSTGRES_URL's role, the authenticator: NOINHERIT, \
            granted each user role (GRANT alice TO authenticator) and groupstore_gateway. It keeps a \
            pool of --pool connections and one LISTEN connection, whatever the number of bridges, and \
            runs each request in a transaction after SET LOCAL ROLE to the role its token names, so \
            row-level security decides what the request reads and writes.

            Prints "groupstore: serving URL …" on stderr once it listens; GET /health answers 200 \
            while it runs, GET /ready 200 while the database answers. Exit status 0 on SIGINT or \
            SIGTERM. Several gateways may serve one database: they hold no session.

            Limits, for a gateway that faces the network: connections open at once \
            (--max-connections; at the cap, the one waiting longest without a request is closed), \
            the time to a connection's first request head (--header-timeout), a request's body \
            (--max-body) and all bodies in memory at once (--max-body-memory), requests and push \
            subscriptions per role (--rate), push connections per role (--max-push-connections), \
            and a request's time (--request-timeout: PostgreSQL aborts the statement, nothing of it \
            commits, and the request is answered 503). docs/GATEWAY.md describes each.

            Example:
              groupstore serve --remote postgres://authenticator@db.example.com/app \\
                --listen 0.0.0.0:8443 --jwt-secret-file /etc/groupstore/jwt.secret \\
                --tls-cert /etc/groupstore/cert.pem --tls-key /etc/groupstore/key.pem
            """
    )

    @Option(name: .long, help: ArgumentHelp("The authenticator's postgres:// URL.", valueName: "postgres-url"))
    var remote: String

    @Option(name: .long, help: ArgumentHelp("The address to listen on (port 0: any free port).", valueName: "host:port"))
    var listen: String

    @Option(
        name: .long,
        help: ArgumentHelp("An HS256 secret's file (at least 32 bytes); repeat it to accept several while rotating.", valueName: "file"))
    var jwtSecretFile: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp("An ES256 or RS256 public key's PEM file; repeat it to accept several while rotating.", valueName: "file"))
    var jwtPublicKeyFile: [String] = []

    @Option(name: .long, help: ArgumentHelp("The most pooled database connections (the listener has one more).", valueName: "n"))
    var pool: Int = 10

    @Option(name: .long, help: ArgumentHelp("TLS: the certificate chain (PEM).", valueName: "file"))
    var tlsCert: String?

    @Option(name: .long, help: ArgumentHelp("TLS: the certificate's private key (PEM).", valueName: "file"))
    var tlsKey: String?

    @Option(name: .long, help: ArgumentHelp("Requests per second a token may make on average (twice that at once).", valueName: "n"))
    var rate: Double = 200

    @Option(name: .long, help: ArgumentHelp("The most bytes a request may have.", valueName: "bytes"))
    var maxBody: Int = 8 * 1024 * 1024

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The most bytes of request bodies held at once, all requests together (then 503, tried again); at least --max-body.",
            valueName: "bytes"))
    var maxBodyMemory: Int = 128 * 1024 * 1024

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds a request may take: then PostgreSQL aborts its statement and it is answered 503 (tried again).", valueName: "seconds"))
    var requestTimeout: Double = 30

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds from a connection's accept (TLS included) to its first request's head; then it is closed.", valueName: "seconds"))
    var headerTimeout: Double = 10

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The most connections open at once (at the cap, the one idle the longest is closed); never more than the open-file limit allows.",
            valueName: "n"))
    var maxConnections: Int = 10_000

    @Option(name: .long, help: ArgumentHelp("The most push connections one role holds at once.", valueName: "n"))
    var maxPushConnections: Int = 64

    @Flag(
        name: .long,
        help: "Read every fetch from the database, sharing no read between fetches of the same request (a baseline to measure against).")
    var noFetchMemory = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds between keepings of the clients' host reports, together (0: each in its own transaction).", valueName: "seconds"))
    var reportInterval: Double = 1

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level?

    func validate() throws {
        guard !jwtSecretFile.isEmpty || !jwtPublicKeyFile.isEmpty else {
            throw ValidationError("give --jwt-secret-file FILE or --jwt-public-key-file FILE: the keys tokens are checked with")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("TLS needs both --tls-cert and --tls-key") }
        guard (1...1000).contains(pool) else { throw ValidationError("--pool takes 1 to 1000 connections") }
        guard rate > 0, maxBody > 0 else { throw ValidationError("--rate and --max-body take numbers above 0") }
        guard maxBodyMemory >= maxBody else { throw ValidationError("--max-body-memory takes at least --max-body (\(maxBody) bytes)") }
        guard requestTimeout > 0, headerTimeout > 0 else {
            throw ValidationError("--request-timeout and --header-timeout take seconds above 0")
        }
        guard maxConnections >= 1, maxPushConnections >= 1 else {
            throw ValidationError("--max-connections and --max-push-connections take numbers of at least 1")
        }
        guard (0...3600).contains(reportInterval) else { throw ValidationError("--report-interval takes 0 to 3600 seconds") }
    }

    func run() async throws {
        do {
            try await reportingFailure {
                #if Gateway
                    try await serve()
                #else
                    throw CommandFailure(message: RemoteArgument.gatewayNotBuilt)
                #endif
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }

    #if Gateway
        private func serve() async throws {
            let lowered = remote.lowercased()
            guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else {
                throw CommandFailure(
                    message: "--remote takes the authenticator's postgres:// URL, not \(RemoteArgument.withoutPassword(remote))")
            }
            LogSetup.bootstrap(level: logLevel ?? .warning)
            let logger = Logger(label: "groupstore.gateway")
            let address = try GatewayConfiguration.parseListen(listen)
            let (secrets, publicKeys) = (jwtSecretFile, jwtPublicKeyFile)
            let keys = try await offThePool { try GatewayKeys(secretFiles: secrets, publicKeyFiles: publicKeys) }
            var configuration = GatewayConfiguration(host: address.host, port: address.port, keys: keys)
            configuration.tlsCertificateFile = tlsCert
            configuration.tlsKeyFile = tlsKey
            configuration.requestsPerSecond = rate
            configuration.burst = rate * 2
            configuration.maxBodyBytes = maxBody
            configuration.maxBodyMemoryBytes = maxBodyMemory
            configuration.requestTimeout = requestTimeout
            configuration.headerTimeout = headerTimeout
            configuration.maxConnections = maxConnections
            configuration.maxPushConnectionsPerIdentity = maxPushConnections
            configuration.remembersFetches = !noFetchMemory
            configuration.hostReportInterval = reportInterval
            let backend = try PostgresGatewayBackend(url: remote, poolSize: pool, logger: logger)
            let scheme = tlsCert == nil ? "http" : "https"
            let (display, pool) = (backend.displayName, self.pool)
            let gateway = GatewayServer(configuration: configuration, backend: backend, logger: logger) { host, port in
                let shown = host.contains(":") ? "[\(host)]" : host
                FileHandle.standardError.write(
                    Data("groupstore: serving \(scheme)://\(shown):\(port) for \(display) (pool \(pool))\n".utf8))
            }
            let group = ServiceGroup(
                configuration: .init(services: [gateway], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        }
    #endif
}
