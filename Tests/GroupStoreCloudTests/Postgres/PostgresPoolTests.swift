#if Postgres
    import Foundation
    import GroupStoreCloud
    import NIOCore
    import NIOPosix
    import PostgresNIO
    import PostgresTestServer
    import XCTest

    @testable import GroupStoreCloudPostgres

    /// A remote with a pool per event loop (a gateway's): an operation
    /// started on a loop's thread is served by a connection of that loop,
    /// one started elsewhere by the first pool, and the pools together open
    /// no more connections than the remote's maximum.
    final class PostgresPoolTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .postgres }

        func testAPoolPerEventLoop_servesEachLoopFromItsOwnConnections_withinTheMaximum() async throws {
            let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
            for maximum in [1, 3] {
                let user = "pool_\(maximum)"
                try server.psql("CREATE ROLE \(user) LOGIN; GRANT groupstore_user TO \(user)")
                let remote = try PostgresRemote(url: server.url(user: user), maximumConnections: maximum, poolPerEventLoop: true)
                let running = Task { try? await remote.run() }
                // Started at once, each holding its connection a little: every pool opens all it may.
                let served = try await withThrowingTaskGroup(of: (started: Int?, servedBy: Int?).self) { group in
                    @Sendable func operation(started: Int?) async throws -> (started: Int?, servedBy: Int?) {
                        try await remote.perform("a test's statement") { session in
                            _ = try await session.cells("SELECT pg_sleep(0.02)::text")
                            return (started, loops.firstIndex { $0 === session.connection.eventLoop })
                        }
                    }
                    for (index, loop) in loops.enumerated() {
                        for _ in 0..<6 {
                            group.addTask(executorPreference: EventLoopExecutor.of(loop)) { try await operation(started: index) }
                        }
                    }
                    for _ in 0..<6 { group.addTask { try await operation(started: nil) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let held = try server.psql(
                    "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename = '\(user)'")
                running.cancel()
                await running.value

                XCTAssertEqual(served.count, 6 * (loops.count + 1), "every operation answered")
                // The loops that have a pool (the first `maximum` ones) are served by their own connections.
                let pooled = min(maximum, loops.count)
                for (started, servedBy) in served {
                    if let started, started < pooled {
                        XCTAssertEqual(servedBy, started, "maximum \(maximum): an operation started on loop \(started)")
                    } else {
                        XCTAssertEqual(servedBy, 0, "maximum \(maximum): an operation started elsewhere takes the first pool")
                    }
                }
                // The pools and the listener: at most the maximum and one.
                XCTAssertLessThanOrEqual(Int(held) ?? .max, maximum + 1, "maximum \(maximum): connections held")
            }
        }
    }
#endif  // Postgres
