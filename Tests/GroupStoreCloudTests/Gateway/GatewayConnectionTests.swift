#if Gateway
    import Foundation
    import Subprocesses
    import XCTest

    /// Connections that never finish a request (issue 41, finding 2): each is
    /// answered or closed in bounded time by a real `groupstore serve`, and
    /// idle sockets cannot take the file descriptors `/health` needs.
    final class GatewayConnectionTests: GatewayLimitsTestCase {
        func testAConnectionThatSendsNothing_orHalfAHead_isClosedAtTheHeaderTimeout_with408ForHalfAHead() throws {
            let gateway = try startGateway(["--header-timeout", "1"])
            let silent = try RawConnection(port: gateway.port)
            let half = try RawConnection(port: gateway.port)
            try half.send("POST /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthor")
            // Bounded waits far above the timeout (1 s): before the fix, neither was ever closed.
            XCTAssertEqual(silent.readUntilClosed(timeout: 15), [], "a connection that sent nothing is closed, with nothing said")
            guard let answered = half.readUntilClosed(timeout: 15) else { return XCTFail("half a head: the connection stayed open") }
            XCTAssertTrue(String(decoding: answered, as: UTF8.self).hasPrefix("HTTP/1.1 408"), String(decoding: answered, as: UTF8.self))
            // A request whose head comes in time is served as before, and its connection kept.
            let kept = try RawConnection(port: gateway.port)
            try kept.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            XCTAssertEqual(try kept.readResponse(timeout: 15).status, 200)
            XCTAssertNil(kept.receive(timeout: 2), "a connection past its first head is not closed by the header timeout")
        }

        /// SIGTERM: a connection that sent nothing, or half a head, has no
        /// request to finish, so the gateway closes it and exits at once (it
        /// waited for the header timeout before).
        func testAGatewayStoppedGracefully_closesConnectionsWithoutARequest_andExitsAtOnce() throws {
            let gateway = try startGateway(["--header-timeout", "60"])
            let silent = try RawConnection(port: gateway.port)
            let half = try RawConnection(port: gateway.port)
            try half.send("POST /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthor")
            let kept = try RawConnection(port: gateway.port)
            try kept.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            XCTAssertEqual(try kept.readResponse(timeout: 15).status, 200)
            gateway.process.send(SIGTERM)
            XCTAssertEqual(gateway.process.waitForExit(timeout: 30), 0, "the gateway exits cleanly, before the header timeout (60 s)")
            XCTAssertNotNil(silent.readUntilClosed(timeout: 5), "the silent connection was closed")
            XCTAssertNotNil(half.readUntilClosed(timeout: 5), "the half head's connection was closed")
        }

        func testATLSHandshakeLeftOpen_isClosedAtTheHeaderTimeout() throws {
            let (certificate, key) = try makeCertificate()
            let gateway = try startGateway(["--header-timeout", "1", "--tls-cert", certificate, "--tls-key", key])
            let stalled = try RawConnection(port: gateway.port)
            // The first bytes of a TLS record (a ClientHello's header), and nothing more.
            try stalled.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
            XCTAssertNotNil(stalled.readUntilClosed(timeout: 15), "a TLS handshake left open stayed open")
        }

        func testRequestsTheDecoderCannotRead_areAnswered400WithConnectionClose_andClosed() throws {
            let gateway = try startGateway()
            let cases: [(what: String, request: String)] = [
                ("a garbage request line", "\u{1}\u{2} nonsense \u{7f}\r\n\r\n"),
                (
                    "a header over 80 KB",
                    "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + String(repeating: "a", count: 90 * 1024) + "\r\n\r\n"
                ),
                (
                    "Content-Length beside Transfer-Encoding",
                    "POST /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                ),
            ]
            for (what, request) in cases {
                let connection = try RawConnection(port: gateway.port)
                try? connection.send(request)
                guard let answer = connection.readUntilClosed(timeout: 15) else {
                    XCTFail("\(what): no answer, and the connection stayed open")
                    continue
                }
                guard let response = RawResponse(answer) else {
                    XCTFail("\(what): closed without an answer (\(answer.count) bytes)")
                    continue
                }
                XCTAssertEqual(response.status, 400, what)
                XCTAssertEqual(response.headers["connection"]?.lowercased(), "close", what)
                XCTAssertTrue(response.message.contains("is not HTTP/1.1 this gateway reads"), "\(what): \(response.body)")
            }
            XCTAssertEqual(try RawConnection.get("/health", port: gateway.port, timeout: 15).status, 200)
            XCTAssertEqual(gateway.process.errors.filter { $0.contains(" error ") }, [], "the gateway logs no line per refused connection")
        }

        /// The attack held 19,990 idle sockets and filled the descriptors; here
        /// the gateway has 256 of them, and 400 idle sockets come.
        func testIdleSocketsPastTheCap_closeTheLongestIdle_andHealthKeepsAnswering() throws {
            let gateway = try startGateway(["--header-timeout", "60"], fileLimit: 256)
            var idle: [RawConnection] = []
            for _ in 0..<400 { idle.append(try RawConnection(port: gateway.port)) }
            // Each health check opens a new connection while the idle ones are held: it is served.
            for attempt in 0..<5 {
                let health = try RawConnection.get("/health", port: gateway.port, timeout: 10)
                XCTAssertEqual(health.status, 200, "health check \(attempt)")
            }
            let open = Self.openFiles(of: gateway.process.pid)
            XCTAssertLessThanOrEqual(open, 256, "the gateway's descriptors")
            // The oldest idle sockets were closed to make room; the newest are still open.
            XCTAssertNotNil(idle[0].readUntilClosed(timeout: 10), "the longest idle connection was closed")
            XCTAssertNil(idle[399].receive(timeout: 0.2), "the newest idle connection is still open")
            // And the gateway still serves the API (a request of a real client, as a bridge makes it).
            let account = try RawConnection(port: gateway.port)
            let token = try bearer("alice")["Authorization"]!
            try account.send("POST /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: \(token)\r\nContent-Length: 0\r\n\r\n")
            let answer = try account.readResponse(timeout: 30)
            XCTAssertEqual(answer.status, 200, answer.body)
            XCTAssertEqual(gateway.process.errors.filter { $0.contains(" error ") }, [], "the gateway logs no line per closed connection")
        }

        /// A self-signed certificate for 127.0.0.1 and its key.
        private func makeCertificate() throws -> (certificate: String, key: String) {
            let (certificate, key) = (root + "/cert.pem", root + "/key.pem")
            let openssl = try Subprocess(
                URL(fileURLWithPath: "/usr/bin/openssl"),
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate,
                ], name: "openssl")
            XCTAssertEqual(openssl.waitForExit(timeout: 30), 0, "openssl req: \(openssl.errors)")
            return (certificate, key)
        }
    }
#endif  // Gateway
