#if Prometheus
    import ArgumentParser
    import Foundation
    import GroupStore
    import Logging
    import Metrics
    import Prometheus
    import ServiceLifecycle
    import UnixSignals

    /// A group member that exports the store's metrics to Prometheus: it joins
    /// the group, follows its saves, and serves the Prometheus text format on
    /// `http://127.0.0.1:<port>/metrics`.
    ///
    ///     metrics-exporter --group /tmp/demo --member exporter --port 9464
    ///     curl -s http://127.0.0.1:9464/metrics | grep groupstore_
    ///
    /// A daemon does the same in two lines: bootstrap swift-metrics with the
    /// backend of its choice once at start, before opening the store.
    @main
    struct MetricsExporter: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "metrics-exporter", abstract: "Follow a group and serve its metrics to Prometheus.")

        @Option(help: "The group directory.") var group: String
        @Option(help: "This member's name.") var member = "exporter"
        @Option(help: "TCP port on 127.0.0.1 (0: any free port, printed on stderr).") var port = 9464

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535, not \(port)") }
        }

        func run() async throws {
            LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
            let logger = Logger(label: member)
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

            let server = try MetricsEndpoint(port: UInt16(port), registry: registry)
            FileHandle.standardError.write(Data("serving metrics on http://127.0.0.1:\(server.port)/metrics\n".utf8))
            server.start()

            var configuration = GroupConfiguration(directory: group, member: try MemberName(member), logger: logger)
            configuration.createIfMissing = true
            let store = try await GroupStore.open(configuration)
            let follower = SaveFollower(store: store)
            let services = ServiceGroup(
                configuration: .init(services: [store, follower], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await services.run()
            server.stop()
        }
    }

    /// Consumes the saves (so the member's cursor, and its lag, move).
    struct SaveFollower: Service {
        let store: GroupStore

        func run() async throws {
            for await save in store.saves() {
                FileHandle.standardError.write(Data("save \(save.seq) by \(save.author)\n".utf8))
            }
        }
    }
#else
    import Foundation

    /// Built without the Prometheus trait: says how to build it.
    @main
    enum MetricsExporterWithoutPrometheus {
        static func main() {
            FileHandle.standardError.write(
                Data(
                    "metrics-exporter: built without Prometheus; build it with: swift build -c release --traits Prometheus --product metrics-exporter\n"
                        .utf8))
            exit(1)
        }
    }
#endif  // Prometheus
