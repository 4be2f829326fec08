// swift-format-ignore-file
// Generated from Sources/GroupStoreGateway/Documentation.docc/GroupStoreGateway.md, snippet 1, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests
#if Gateway

import GroupStoreGateway
import Logging
import ServiceLifecycle
import UnixSignals

func snippet_GroupStoreGateway_1(logger: Logger) async throws {
    let keys = try GatewayKeys(secretFiles: ["/etc/groupstore/jwt.secret"])
    var configuration = GatewayConfiguration(host: "0.0.0.0", port: 8443, keys: keys)
    configuration.tlsCertificateFile = "/etc/groupstore/cert.pem"
    configuration.tlsKeyFile = "/etc/groupstore/key.pem"
    let backend = try PostgresGatewayBackend(url: "postgres://authenticator@db.example.com/app", poolSize: 10, logger: logger)
    let gateway = GatewayServer(configuration: configuration, backend: backend, logger: logger)
    try await ServiceGroup(services: [gateway], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
}
#endif  // Gateway
