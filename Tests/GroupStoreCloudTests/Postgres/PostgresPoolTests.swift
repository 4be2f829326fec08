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

        /// A pooled connection whose server stops answering (here its backend
        /// is stopped; a network that dropped the connection without a word
        /// looks the same) fails its statement at the bound, and is closed: the
        /// next operation is served by another connection, not queued behind it.
        func testAStatementUnansweredPastItsBound_closesItsConnection_andTheNextOperationGetsAnother() async throws {
            try server.psql("CREATE ROLE silent LOGIN; GRANT groupstore_user TO silent")
            let remote = try PostgresRemote(url: server.url(user: "silent"), maximumConnections: 1)
            let running = Task { try? await remote.run() }
            defer { running.cancel() }
            func backend() async throws -> String {
                try await remote.perform("a test's statement") { session in
                    try await session.cells("SELECT pg_backend_pid()::text").first?.first ?? nil
                } ?? ""
            }
            let stopped = try await backend()
            guard let pid = pid_t(stopped) else { return XCTFail("no backend pid: \(stopped)") }
            XCTAssertEqual(kill(pid, SIGSTOP), 0)
            do {
                defer { kill(pid, SIGCONT) }
                let started = ContinuousClock.now
                do {
                    _ = try await PostgresRemote.$statementTimeout.withValue(.seconds(1)) { try await backend() }
                    XCTFail("a stopped backend answered")
                } catch let error as CloudSyncError {
                    XCTAssertEqual(error.code, .transient, error.message)
                    XCTAssertTrue(error.message.contains("got no answer"), error.message)
                }
                XCTAssertLessThan(ContinuousClock.now - started, .seconds(15), "the statement's bound (1 s)")
            }
            let next = try await backend()
            XCTAssertFalse(next.isEmpty)
            XCTAssertNotEqual(next, stopped, "the next operation went to the connection that answered nothing")
        }
    }
#endif  // Postgres
