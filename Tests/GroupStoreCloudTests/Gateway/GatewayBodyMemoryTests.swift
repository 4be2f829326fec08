#if Gateway
    import Foundation
    import GroupStoreCloud
    import XCTest

    @testable import GroupStoreCloudHTTP

    /// Request bodies in memory are bounded across requests (issue 41,
    /// finding 5): concurrent uploads reserve their length before they are
    /// read, one that finds no room is answered 503 with `Retry-After` at
    /// once, and what a request reserved is given back once it is answered.
    /// And a modify, far under the body limit, meets the PostgreSQL remote's
    /// own caps, which its refusal names (finding 8).
    final class GatewayBodyMemoryTests: GatewayLimitsTestCase {
        static let size = 1 << 20

        /// A `POST /v1/assets/missing` of `size` bytes (a JSON array of one long string), its head and first bytes sent.
        func startUpload(port: Int, token: String) throws -> (connection: RawConnection, rest: [UInt8]) {
            let body = Array(("[\"" + String(repeating: "a", count: Self.size - 4) + "\"]").utf8)
            let connection = try RawConnection(port: port)
            try connection.send(
                "POST /v1/assets/missing HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n")
            try connection.send(Array(body.prefix(100)))
            return (connection, Array(body.dropFirst(100)))
        }

        func testConcurrentUploadsPastTheBodyMemory_oneIsAnswered503WithRetryAfter_andTheMemoryIsGivenBackOnceAnswered() throws {
            // Room for three bodies of 1 MiB at once.
            let gateway = try startGateway(["--max-body", String(Self.size), "--max-body-memory", String(3 * Self.size)])
            let token = try gatewaySecret.token(role: "alice")
            let started = try (0..<4).map { _ in try startUpload(port: gateway.port, token: token) }
            // Three wait for the rest of their bodies; the one that found no room is answered at once.
            var received = [[UInt8]](repeating: [], count: started.count)
            var refused: [Int] = []
            let end = Date().addingTimeInterval(10)
            while refused.isEmpty, Date() < end {
                for (index, upload) in started.enumerated() {
                    guard let bytes = upload.connection.receive(timeout: 0.05), !bytes.isEmpty else { continue }
                    received[index] += bytes
                    guard let response = RawResponse(received[index]) else { continue }
                    XCTAssertEqual(response.status, 503, response.body)
                    XCTAssertEqual(response.headers["retry-after"], "1")
                    XCTAssertTrue(response.message.contains("holds as many request bodies as it may (3145728 bytes)"), response.message)
                    refused.append(index)
                }
            }
            XCTAssertEqual(refused.count, 1, "uploads refused for want of memory: \(refused)")
            var uploads = started.enumerated().filter { !refused.contains($0.offset) }.map(\.element)
            // One of the three ends: it is answered (not for want of memory), and its room is given back.
            let first = uploads.removeFirst()
            try first.connection.send(first.rest)
            let answered = try first.connection.readResponse(timeout: 30)
            XCTAssertNotEqual(answered.status, 503, answered.body)
            let next = try startUpload(port: gateway.port, token: token)
            try next.connection.send(next.rest)
            let served = try next.connection.readResponse(timeout: 30)
            XCTAssertNotEqual(served.status, 503, "the room of an answered request was given back: \(served.body)")
        }

        /// The body's timer is the request timeout, on the connection's event
        /// loop (`LoopSleep`): a body that stops arriving is answered 503 when
        /// it fires, and the gateway answers others meanwhile.
        func testABodyThatStopsArriving_isAnswered503AtTheRequestTimeout_andOthersAreServedMeanwhile() throws {
            let gateway = try startGateway(["--request-timeout", "1"])
            let stalled = try startUpload(port: gateway.port, token: try gatewaySecret.token(role: "alice"))
            XCTAssertEqual(try RawConnection.get("/health", port: gateway.port, timeout: 15).status, 200)
            // Bounded far above the timeout (1 s).
            let answer = try stalled.connection.readResponse(timeout: 15)
            XCTAssertEqual(answer.status, 503, answer.body)
            XCTAssertTrue(answer.message.contains("the request's body did not arrive within 1 s"), answer.message)
        }

        func testAModifyPastTheRemotesCap_isRefused413_namingTheCap() throws {
            let gateway = try startGateway()
            let changes = (0..<401).map { index in
                GatewayWire.Change(
                    .save(
                        id: CloudRecordID(zone: .private("alice"), type: "notes", name: "n\(index)"), baseTag: nil, fields: [:],
                        editedAt: Date()))
            }
            let body = try GatewayWire.encode(changes)
            XCTAssertLessThan(body.count, 8 * 1024 * 1024, "far under --max-body")
            let connection = try RawConnection(port: gateway.port)
            try connection.send(
                "POST /v1/modify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: \(try bearer("alice")["Authorization"]!)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n")
            try connection.send([UInt8](body))
            let answer = try connection.readResponse(timeout: 30)
            XCTAssertEqual(answer.status, 413, answer.body)
            XCTAssertTrue(answer.message.contains("401 changes are more than"), answer.message)
            XCTAssertTrue(answer.message.contains("(at most 400 changes in one modify)"), answer.message)
        }
    }
#endif  // Gateway
