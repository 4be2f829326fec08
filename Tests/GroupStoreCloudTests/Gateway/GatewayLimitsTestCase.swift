#if Gateway
    import Foundation
    import GroupStoreCloud
    import PostgresTestServer
    import XCTest

    /// Base of the tests of the gateway's limits: a PostgreSQL server set up
    /// with `alice`, `bob` and `carol` and an authenticator granted them, and
    /// a `groupstore serve` process started by each test with the options it
    /// tries (``startGateway(_:pool:fileLimit:)``). The attacker speaks to it
    /// over raw sockets (``RawConnection``, ``RawWebSocket``) or real clients.
    class GatewayLimitsTestCase: CloudTestCase {
        override class var remoteKind: RemoteKind { .postgres }

        override func setUp() async throws {
            try await super.setUp()
            gatewaySecret = try GatewaySecret()
            try GatewayProcess.createAuthenticator(on: server, grantedRoles: ["alice", "bob", "carol"])
        }

        /// A gateway with `options` beside the usual ones; it is stopped with the test.
        @discardableResult
        func startGateway(_ options: [String] = [], pool: Int = 4, fileLimit: Int? = nil) throws -> GatewayProcess {
            let gateway = try GatewayProcess.start(server: server, secret: gatewaySecret, pool: pool, extra: options, fileLimit: fileLimit)
            gateways.append(gateway)
            return gateway
        }

        /// `Authorization: Bearer` with a token of `role`.
        func bearer(_ role: String, expiresIn: TimeInterval? = 3600, now: Date = Date()) throws -> [String: String] {
            ["Authorization": "Bearer " + (try gatewaySecret.token(role: role, expiresIn: expiresIn, now: now))]
        }

        /// Polls `condition` every 50 ms until it holds or `timeout` seconds
        /// pass (for a state of another process that sends no event); fails
        /// the test saying `what` when it never holds.
        @discardableResult
        func eventually(
            _ what: String, timeout: TimeInterval, file: StaticString = #filePath, line: UInt = #line, _ condition: () throws -> Bool
        ) rethrows -> Bool {
            let end = Date().addingTimeInterval(timeout)
            repeat {
                if try condition() { return true }
                usleep(50_000)
            } while Date() < end
            XCTFail("\(what): not within \(timeout) s", file: file, line: line)
            return false
        }

        /// The descriptors the process `pid` holds open.
        static func openFiles(of pid: Int32) -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
        }
    }
#endif  // Gateway
