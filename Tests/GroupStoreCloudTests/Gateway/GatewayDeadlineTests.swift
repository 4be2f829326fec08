#if Gateway
    import AsyncHTTPClient
    import Foundation
    import GroupStoreCloud
    import NIOCore
    import NIOHTTP1
    import PostgresTestServer
    import XCTest

    @testable import GroupStoreCloudHTTP

    /// The request deadline reaches the database (issue 41, finding 3): a
    /// statement still running at it is aborted by PostgreSQL, so a write
    /// answered "try again" never commits later, and the pool serves others.
    final class GatewayDeadlineTests: GatewayLimitsTestCase {
        let notes = CloudTestCase.titledNotes

        func testWritesSlowPastTheDeadline_areAnswered503_commitNothing_andThePoolServesOthersMeanwhile() async throws {
            let gateway = try startGateway(["--request-timeout", "2"], pool: 2)
            let alice = try gatewayRemote(user: "alice")
            try await alice.prepare([notes])
            // A write of a slow note sleeps 20 s in its transaction (as a lock held elsewhere would make it wait).
            try server.psql(
                """
                CREATE FUNCTION public.slow_note() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.title = 'slow' THEN PERFORM pg_sleep(20); END IF; RETURN NEW; END $$;
                CREATE TRIGGER slow_note BEFORE INSERT ON public.notes FOR EACH ROW EXECUTE FUNCTION public.slow_note();
                """)
            let base = "http://127.0.0.1:\(gateway.port)"
            let token = try gatewaySecret.token(role: "alice")
            // Twice as many slow writes as the pool has connections.
            let answers = try await withThrowingTaskGroup(of: (status: Int, body: String).self) { group in
                for index in 0..<4 {
                    let id = CloudRecordID(zone: .private("alice"), type: "notes", name: "slow\(index)")
                    let change = GatewayWire.Change(.save(id: id, baseTag: nil, fields: ["title": .text("slow")], editedAt: Date()))
                    let body = try GatewayWire.encode([change])
                    group.addTask { try await Self.post(base + "/v1/modify", token: token, body: [UInt8](body)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for answer in answers {
                XCTAssertEqual(answer.status, 503, answer.body)
                XCTAssertTrue(answer.body.contains("at its deadline (2 s); try again"), answer.body)
            }
            // The statements were aborted on the server: their connections are back in the
            // pool, and another user's request and the readiness check are served at once.
            let bob = try await Self.post(base + "/v1/account", token: try gatewaySecret.token(role: "bob"), body: nil, timeout: 10)
            XCTAssertEqual(bob.status, 200, "bob is served while alice's writes would still sleep: \(bob.body)")
            let ready = try await Self.get(base + "/ready", timeout: 10)
            XCTAssertEqual(ready.status, 200, ready.body)
            // No statement sleeps on any more, and none of the writes answered "try again" committed.
            let server = self.server!
            let sleeping = try await deadline(30, "no slow statement left on the server") { () -> Int? in
                while true {
                    let count = Int(try server.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'")) ?? -1
                    if count == 0 { return count }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            XCTAssertEqual(sleeping, 0)
            XCTAssertEqual(try server.psql("SELECT count(*) FROM notes WHERE title = 'slow'"), "0", "a write answered 503 committed")
        }

        func testAWriteThatCommitsInTime_isAnswered_andOneRefusedForItsOwnReason_keepsItsReason() async throws {
            let gateway = try startGateway(["--request-timeout", "5"], pool: 2)
            let alice = try gatewayRemote(user: "alice")
            try await alice.prepare([notes])
            let base = "http://127.0.0.1:\(gateway.port)"
            let id = CloudRecordID(zone: .private("alice"), type: "notes", name: "n1")
            let change = GatewayWire.Change(.save(id: id, baseTag: nil, fields: ["title": .text("quick")], editedAt: Date()))
            let saved = try await Self.post(
                base + "/v1/modify", token: try gatewaySecret.token(role: "alice"), body: [UInt8](GatewayWire.encode([change])))
            XCTAssertEqual(saved.status, 200, saved.body)
            XCTAssertEqual(try server.psql("SELECT title FROM notes"), "quick")
            let refused = try await Self.post(
                base + "/v1/fetch", token: try gatewaySecret.token(role: "bob"), body: Array(#"{"zone":1}"#.utf8))
            XCTAssertEqual(refused.status, 400, refused.body)
        }

        static func post(_ url: String, token: String, body: [UInt8]?, timeout: Int64 = 30) async throws -> (status: Int, body: String) {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer " + token)
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(timeout))
            var answer = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), answer.readString(length: answer.readableBytes) ?? "")
        }

        static func get(_ url: String, timeout: Int64) async throws -> (status: Int, body: String) {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(timeout))
            var answer = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), answer.readString(length: answer.readableBytes) ?? "")
        }
    }
#endif  // Gateway
