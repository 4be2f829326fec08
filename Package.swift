// swift-tools-version:6.2
import PackageDescription

let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// What every daemon executable of the package uses: the store, logging,
/// a service group stopped by signals, and its command line.
let daemonDependencies: [Target.Dependency] = [
    "GroupStore",
    .product(name: "Logging", package: "swift-log"),
    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    .product(name: "UnixSignals", package: "swift-service-lifecycle"),
    .product(name: "ArgumentParser", package: "swift-argument-parser"),
]
let exampleDaemonDependencies: [Target.Dependency] =
    daemonDependencies + ["JobQueue", .product(name: "GRDB", package: "GRDB.swift")]

let package = Package(
    name: "GroupStore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "GroupStore", targets: ["GroupStore"]),
        .library(name: "FolderWatching", targets: ["FolderWatching"]),
        .library(name: "GroupStoreCloud", targets: ["GroupStoreCloud"]),
        .library(name: "GroupStoreCloudEmbedded", targets: ["GroupStoreCloudEmbedded"]),
        .library(name: "GroupStoreCloudPostgres", targets: ["GroupStoreCloudPostgres"]),
        .library(name: "GroupStoreGateway", targets: ["GroupStoreGateway"]),
        .library(name: "GroupStoreCloudHTTP", targets: ["GroupStoreCloudHTTP"]),
        .executable(name: "groupstore", targets: ["GroupStoreCLI"]),
        .executable(name: "groupstore-peer", targets: ["GroupStorePeer"]),
        .executable(name: "groupstore-demo", targets: ["groupstore-demo"]),
        .executable(name: "groupstore-bench", targets: ["GroupStoreBench"]),
        .executable(name: "groupstore-faults", targets: ["GroupStoreFaults"]),
        .executable(name: "counter", targets: ["counter"]),
        .executable(name: "job-producer", targets: ["job-producer"]),
        .executable(name: "job-worker", targets: ["job-worker"]),
        .executable(name: "metrics-exporter", targets: ["metrics-exporter"]),
    ],
    // The optional parts, each off by default: a build (or a package that
    // depends on GroupStore) compiles none of SwiftNIO, BoringSSL or
    // swift-crypto unless it asks for a part that needs them.
    traits: [
        .trait(
            name: "Postgres",
            description: "The PostgreSQL remote of the cloud bridge (GroupStoreCloudPostgres, on postgres-nio and SwiftNIO)."),
        .trait(name: "Prometheus", description: "The metrics-exporter example, on swift-prometheus."),
        .trait(
            name: "Gateway",
            description:
                "The sync gateway (GroupStoreGateway, `groupstore serve`, on Hummingbird) and the bridge's remote through it (GroupStoreCloudHTTP, on AsyncHTTPClient); implies Postgres.",
            enabledTraits: ["Postgres"]),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // Folder watching: inotify, usable on its own.
        .target(
            name: "FolderWatching",
            dependencies: ["CEventFD"],
            swiftSettings: upcomingFeatures
        ),
        .target(name: "CEventFD"),
        // The store: group directory, history, publisher, merger, pruner.
        .target(
            name: "GroupStore",
            dependencies: [
                "FolderWatching",
                // SHA-256: content-addressed assets, checksums of shipped migrations (C: fast in debug builds too).
                "CSHA256",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the history's small hot queries (RawRows).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The cloud sync bridge: engine, schema mapping, conflict policies,
        // the remote protocol and the in-memory remote (no remote of its own
        // beyond that: the embedded and PostgreSQL remotes are modules apart).
        .target(name: "CSHA256"),
        .target(
            name: "GroupStoreCloud",
            dependencies: [
                "GroupStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The bridge's embedded remote: a SQLite file shared by the groups of
        // one host, push hints by inotify.
        .target(
            name: "GroupStoreCloudEmbedded",
            dependencies: [
                "GroupStoreCloud",
                "FolderWatching",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The bridge's PostgreSQL remote: typed tables, a gap-free change log,
        // row-level security per user role, LISTEN/NOTIFY push.
        .target(
            name: "GroupStoreCloudPostgres",
            dependencies: [
                "GroupStoreCloud",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The sync gateway: the remote operations over HTTP(S) and push hints over
        // WebSocket, each request run as the database role its JWT names.
        .target(
            name: "GroupStoreGateway",
            dependencies: [
                "GroupStoreCloud",
                "GroupStoreCloudPostgres",
                "GroupStoreCloudHTTP",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Gateway"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Gateway"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Gateway"])),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket", condition: .when(traits: ["Gateway"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Gateway"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Gateway"])),
                .product(name: "CryptoExtras", package: "swift-crypto", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Gateway"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The bridge's remote through a gateway: HTTP(S) and WebSocket push hints.
        .target(
            name: "GroupStoreCloudHTTP",
            dependencies: [
                "GroupStore",
                "GroupStoreCloud",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Gateway"])),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket", condition: .when(traits: ["Gateway"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Gateway"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Child processes with collected output: for the demo, the benchmark and the tests.
        .target(
            name: "Subprocesses",
            swiftSettings: upcomingFeatures
        ),
        // Test infrastructure, not shipped: a throwaway PostgreSQL server per
        // test (and per benchmark part) on a Unix socket.
        .target(
            name: "PostgresTestServer",
            path: "Tests/Support/PostgresTestServer",
            swiftSettings: upcomingFeatures
        ),
        // The `groupstore` command-line tool.
        .executableTarget(
            name: "GroupStoreCLI",
            dependencies: [
                "GroupStore",
                "GroupStoreCloud",
                "GroupStoreCloudEmbedded",
                "GroupStoreCloudPostgres",
                "GroupStoreGateway",
                "GroupStoreCloudHTTP",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // A scriptable member that writes and watches: drives the multi-process tests.
        .executableTarget(
            name: "GroupStorePeer",
            dependencies: daemonDependencies + [.product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: upcomingFeatures
        ),
        // Benchmarks: `swift run -c release groupstore-bench`.
        .executableTarget(
            name: "GroupStoreBench",
            dependencies: [
                "GroupStore",
                "Subprocesses",
                "GroupStoreCloud",
                "GroupStoreCloudEmbedded",
                "GroupStoreCloudPostgres",
                "GroupStoreCloudHTTP",
                "GroupStoreGateway",
                .target(name: "PostgresTestServer", condition: .when(traits: ["Postgres"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Gateway"])),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the floors (the same SQL with no Swift layer).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The fault and abuse suite: `swift build && .build/debug/groupstore-faults`.
        .executableTarget(
            name: "GroupStoreFaults",
            dependencies: [
                "GroupStore",
                "Subprocesses",
                // The failover trial (traits Postgres and Gateway) starts its own server.
                .target(name: "PostgresTestServer", condition: .when(traits: ["Postgres"])),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Examples: one executable per folder.
        .executableTarget(
            name: "groupstore-demo",
            dependencies: ["Subprocesses"],
            path: "Examples/Demo",
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "counter",
            dependencies: [
                "GroupStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/Counter",
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "JobQueue",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift")],
            path: "Examples/JobQueue",
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "job-producer",
            dependencies: exampleDaemonDependencies,
            path: "Examples/JobProducer",
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "job-worker",
            dependencies: exampleDaemonDependencies,
            path: "Examples/JobWorker",
            swiftSettings: upcomingFeatures
        ),
        // The store's metrics served to Prometheus.
        .executableTarget(
            name: "metrics-exporter",
            dependencies: daemonDependencies + [
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Prometheus"])),
            ],
            path: "Examples/MetricsExporter",
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "FolderWatchingTests",
            dependencies: ["FolderWatching"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "GroupStoreTests",
            dependencies: [
                "GroupStore",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                "Subprocesses",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "GroupStoreCloudTests",
            dependencies: [
                "GroupStoreCloud",
                "GroupStoreCloudEmbedded",
                "GroupStoreCloudPostgres",
                "GroupStoreCloudHTTP",
                "GroupStoreGateway",
                "GroupStore",
                "GroupStoreCLI",
                "FolderWatching",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Gateway"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Gateway"])),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Gateway"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Gateway"])),
                .product(name: "CryptoExtras", package: "swift-crypto", condition: .when(traits: ["Gateway"])),
                .target(name: "PostgresTestServer", condition: .when(traits: ["Postgres"])),
                "Subprocesses",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: upcomingFeatures
        ),
        // Spawns the built executables as child processes.
        .testTarget(
            name: "GroupStoreProcessTests",
            dependencies: [
                "GroupStore",
                "Subprocesses",
                "GroupStoreCLI",
                "GroupStorePeer",
                "groupstore-demo",
                "GroupStoreFaults",
                "counter",
                "job-producer",
                "job-worker",
                "metrics-exporter",
                .target(name: "PostgresTestServer", condition: .when(traits: ["Postgres"])),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Every Swift snippet of the README and the DocC articles, compiled
        // with the package's settings (Tests/SnippetTests/Generated).
        .testTarget(
            name: "SnippetTests",
            dependencies: [
                "GroupStore",
                "GroupStoreCloud",
                "GroupStoreCloudEmbedded",
                "GroupStoreCloudPostgres",
                "GroupStoreCloudHTTP",
                "GroupStoreGateway",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ]
)
