#if Gateway
    import Foundation
    import GroupStoreCloud
    import PostgresTestServer
    import Subprocesses
    import XCTest

    @testable import GroupStoreCloudHTTP

    /// The push connection's limits and refusals (issue 41, findings 4 and 7),
    /// from raw WebSocket clients: `subscribe` frames take from the role's
    /// rate bucket, a role holds a bounded number of push connections, and a
    /// refused upgrade is closed with a code and its sentence.
    final class GatewayPushLimitsTests: GatewayLimitsTestCase {
        func testRefusedPushUpgrades_areClosedWithTheirCodeAndSentence() throws {
            let gateway = try startGateway()
            try server.createRole("dave")
            try server.psql("GRANT groupstore_user TO dave")
            let cases: [(what: String, headers: [String: String], code: UInt16, sentence: String)] = [
                ("no token", [:], 4401, "token refused: no token: send Authorization: Bearer TOKEN"),
                (
                    "an expired token", try bearer("alice", expiresIn: 60, now: Date().addingTimeInterval(-3600)), 4401,
                    "token refused: the token expired at"
                ),
                ("a role the gateway is not granted", try bearer("dave"), 4403, "the gateway may not act as role \"dave\""),
                ("the users' group role", try bearer("groupstore_user"), 4403, "it is the group role of the users, not a user"),
            ]
            for (what, headers, code, sentence) in cases {
                let socket = try RawWebSocket(port: gateway.port, headers: headers)
                XCTAssertEqual(socket.handshake.status, 101, "\(what): \(socket.handshake.body)")
                guard let close = socket.closeFrame(timeout: 15) else {
                    XCTFail("\(what): not closed")
                    continue
                }
                XCTAssertEqual(close.code, code, "\(what): \(close.reason)")
                XCTAssertTrue(close.reason.contains(sentence), "\(what): \(close.reason)")
            }
            // A valid token is served.
            let served = try RawWebSocket(port: gateway.port, headers: try bearer("alice"))
            try served.send(text: #"{"type":"subscribe","zones":["private/alice"]}"#)
            guard case .text(let answer) = served.receive(timeout: 15) else { return XCTFail("a valid token was not served") }
            XCTAssertTrue(answer.contains(#""type":"subscribed""#), answer)
        }

        func testSubscribeFramesPastTheRoleRate_closeTheConnection4429_andTheRoleRequestsWaitToo() throws {
            let gateway = try startGateway(["--rate", "1"])
            let socket = try RawWebSocket(port: gateway.port, headers: try bearer("alice"))
            XCTAssertEqual(socket.handshake.status, 101)
            // A burst of 2: 20 subscriptions, each a database transaction, at once.
            for _ in 0..<20 { try socket.send(text: #"{"type":"subscribe","zones":["private/alice"]}"#) }
            var subscribed = 0
            var close: (code: UInt16?, reason: String)?
            while let frame = socket.receive(timeout: 15) {
                if case .text = frame { subscribed += 1 }
                if case .close(let code, let reason) = frame {
                    close = (code, reason)
                    break
                }
            }
            XCTAssertLessThanOrEqual(subscribed, 3, "subscriptions served past the rate")
            XCTAssertEqual(close?.code, 4429, close?.reason ?? "not closed")
            XCTAssertTrue(close?.reason.hasPrefix("too many subscriptions for role \"alice\": wait") == true, close?.reason ?? "")
            // The same bucket as the role's requests.
            let account = try RawConnection(port: gateway.port)
            try account.send(
                "POST /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: \(try bearer("alice")["Authorization"]!)\r\nContent-Length: 0\r\n\r\n"
            )
            let answer = try account.readResponse(timeout: 15)
            XCTAssertEqual(answer.status, 429, answer.body)
            XCTAssertNotNil(answer.headers["retry-after"])
        }

        func testPushConnectionsPastTheRoleCap_areClosed4429_andOtherRolesAreServed() throws {
            let gateway = try startGateway(["--max-push-connections", "2"])
            var held: [RawWebSocket] = []
            for _ in 0..<2 {
                let socket = try RawWebSocket(port: gateway.port, headers: try bearer("alice"))
                try socket.send(text: #"{"type":"subscribe","zones":["private/alice"]}"#)
                guard case .text = socket.receive(timeout: 15) else { return XCTFail("alice's push connection was not served") }
                held.append(socket)
            }
            // Another token of the same role is the same identity.
            let third = try RawWebSocket(port: gateway.port, headers: try bearer("alice", expiresIn: 7200))
            let close = third.closeFrame(timeout: 15)
            XCTAssertEqual(close?.code, 4429, close?.reason ?? "not closed")
            XCTAssertEqual(close?.reason, "too many push connections for role \"alice\" (at most 2)")
            let bob = try RawWebSocket(port: gateway.port, headers: try bearer("bob"))
            try bob.send(text: #"{"type":"subscribe","zones":["private/bob"]}"#)
            guard case .text = bob.receive(timeout: 15) else { return XCTFail("bob's push connection was not served") }
            // One of alice's closes: she may open another.
            held.removeFirst()
            let again = try eventually("alice's connection served again", timeout: 15) {
                let socket = try RawWebSocket(port: gateway.port, headers: try bearer("alice"))
                try socket.send(text: #"{"type":"subscribe","zones":["private/alice"]}"#)
                if case .text = socket.receive(timeout: 5) { return true }
                return false
            }
            XCTAssertTrue(again)
        }

        /// The client reports the refusal's sentence, rather than reconnecting quietly.
        func testTheClientsPushConnection_reportsTheGatewaysRefusal() async throws {
            try startGateway()
            let expired = try gatewaySecret.token(role: "alice", expiresIn: 60, now: Date().addingTimeInterval(-3600))
            let remote = try gatewayRemote(user: "alice", token: expired)
            let refusals = remote.pushRefusals.stream()
            let refusal = try await deadline(30, "the push connection's refusal") { () -> CloudSyncError? in
                for await refusal in refusals { return refusal }
                return nil
            }
            XCTAssertEqual(refusal.code, .unauthorized)
            XCTAssertTrue(refusal.message.contains("token refused: the token expired at"), refusal.message)
        }

        /// A token refused on the push connection is read again from its file
        /// at once: a bridge that makes no request meanwhile (its fetches
        /// answered by the pages sent with hints) picks up a renewed token too.
        func testAPushConnectionRefusedItsToken_reconnectsWithTheTokenFilesNewOne() async throws {
            let gateway = try startGateway()
            let expired = try gatewaySecret.token(role: "alice", expiresIn: 60, now: Date().addingTimeInterval(-3600))
            let file = root + "/alice.token"
            try (try gatewaySecret.token(role: "alice") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            let remote = try GatewayRemote(
                GatewayRemote.Configuration(url: "http://127.0.0.1:\(gateway.port)", token: expired, tokenFile: file))
            let messages = remote.pushMessages.stream(bufferingNewest: 100)
            let running = Task { try? await remote.run() }
            defer { running.cancel() }
            let subscribed = try await deadline(30, "a subscription on the connection made with the file's token") { () -> Bool? in
                for await message in messages where message.type == .subscribed { return true }
                return nil
            }
            XCTAssertTrue(subscribed)
            XCTAssertNotEqual(remote.transport.bearer, expired)
        }
    }
#endif  // Gateway
