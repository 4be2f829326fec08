#if Gateway
    import AsyncHTTPClient
    import Foundation
    import GroupStoreCloud
    import GroupStoreGateway
    import NIOCore
    import NIOHTTP1
    import PostgresTestServer
    import Subprocesses
    import Synchronization
    import XCTest

    @testable import GroupStoreCloudHTTP

    /// Who may do what through a gateway: the token names the role, the
    /// database decides (row-level security, as for a role that logs in), and
    /// a token the gateway does not accept is refused with its reason.
    final class GatewayAuthTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .gateway }
        let notes = CloudTestCase.titledNotes

        func testTwoUsers_neitherReadsNorChangesTheOthersPrivateRows() async throws {
            let alice = try gatewayRemote(user: "alice")
            let bob = try gatewayRemote(user: "bob")
            let aliceRole = try await alice.account()
            let bobRole = try await bob.account()
            XCTAssertEqual(aliceRole, "alice")
            XCTAssertEqual(bobRole, "bob")
            try await alice.prepare([notes])
            try await bob.prepare([notes])
            let mine = CloudRecordID(zone: .private("alice"), type: "notes", name: "n1")
            guard
                case .saved(let saved) = try await alice.modify([
                    .save(id: mine, baseTag: nil, fields: ["title": .text("alice's")], editedAt: Date())
                ]).first
            else { return XCTFail("alice saves her note") }
            // Bob cannot list alice's zone, nor write into it, nor change her row by its tag.
            do {
                _ = try await bob.fetchChanges(in: .private("alice"), since: nil, limit: 100)
                XCTFail("bob read alice's private zone")
            } catch let error as CloudSyncError {
                XCTAssertEqual(error.code, .permissionDenied, error.message)
            }
            let results = try await bob.modify([
                .save(id: mine, baseTag: saved.tag, fields: ["title": .text("bob was here")], editedAt: Date()),
                .delete(id: mine, baseTag: saved.tag, editedAt: Date()),
            ])
            for result in results {
                guard case .refused = result else { return XCTFail("bob changed alice's row: \(result)") }
            }
            // Bob's own zone holds nothing of hers, and hers is intact.
            let bobsOwn = try await bob.fetchChanges(in: .private("bob"), since: nil, limit: 100)
            let alicesOwn = try await alice.fetchChanges(in: .private("alice"), since: nil, limit: 100)
            XCTAssertEqual(bobsOwn.changed, [])
            XCTAssertEqual(alicesOwn.changed, [saved])
            // Through psql too: the row is alice's, as the server sees it.
            XCTAssertEqual(try server.psql("SELECT gs_owner || ':' || title FROM notes"), "alice:alice's")
        }

        /// Through a gateway every user logs in as its authenticator: the
        /// server must still tell users apart when it records who created a
        /// type (format 4 took the login role, so bob could add columns to
        /// alice's type) and refuse a user's public type.
        func testTypesPreparedThroughAGateway_areTheirUsersOwn() async throws {
            let alice = try gatewayRemote(user: "alice")
            let bob = try gatewayRemote(user: "bob")
            try await alice.prepare([notes])
            var wider = notes
            wider.columns.append(CloudColumn(name: "spam", kind: .text, declaredType: "TEXT", notNull: false, isKey: false))
            try await bob.prepare([wider])
            XCTAssertEqual(
                try server.psql("SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.notes'::regclass AND attname = 'spam'"), "0",
                "bob added a column to alice's type through the gateway")
            XCTAssertEqual(try server.psql("SELECT creator FROM groupstore.types WHERE name = 'notes'"), "alice")
            try await alice.prepare([wider])
            XCTAssertEqual(
                try server.psql("SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.notes'::regclass AND attname = 'spam'"), "1",
                "alice adds columns to her own type")
            let board = CloudRecordType(name: "board", scope: .public, columns: notes.columns)
            do {
                try await bob.prepare([board])
                XCTFail("bob declared a public type through the gateway")
            } catch let error as CloudSyncError {
                XCTAssertEqual(error.code, .permissionDenied, error.message)
                XCTAssertTrue(error.message.contains("record type board is not declared on this server"), error.message)
            }
        }

        func testRefusedTokens_eachWithItsSentence_andNothingOfTheTokenLogged() async throws {
            let other = try GatewaySecret()
            defer { other.remove() }
            try server.createRole("dave")
            try server.psql("GRANT groupstore_user TO dave")
            let valid = try gatewaySecret.token(role: "alice")
            let parts = valid.split(separator: ".").map(String.init)
            let forged = Data(#"{"role":"bob","iat":0}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            let cases: [(what: String, token: String, status: Int, sentence: String)] = [
                (
                    "expired", try gatewaySecret.token(role: "alice", expiresIn: 60, now: Date().addingTimeInterval(-3600)), 401,
                    "the token expired at"
                ),
                ("tampered", parts[0] + "." + forged + "." + parts[2], 401, "signature does not match its contents (tampered with)"),
                ("another key", try other.token(role: "alice"), 401, "signed with a key this gateway does not have"),
                ("not a JWT", "not-a-token", 401, "is not a JWT"),
                ("an ungranted role", try gatewaySecret.token(role: "dave"), 403, "the gateway may not act as role \"dave\""),
                ("a role that does not exist", try gatewaySecret.token(role: "nobody"), 403, "the gateway may not act as role \"nobody\""),
            ]
            for (what, token, status, sentence) in cases {
                let remote = try gatewayRemote(user: "alice", token: token)
                do {
                    _ = try await remote.account()
                    XCTFail("\(what): accepted")
                } catch let error as CloudSyncError {
                    XCTAssertEqual(error.code, .unauthorized, "\(what): \(error.message)")
                    XCTAssertTrue(error.message.contains(sentence), "\(what): \(error.message)")
                    XCTAssertFalse(error.message.contains("\n"), "\(what): one line")
                }
                let answer = try await Self.post("http://127.0.0.1:\(gateways[0].port)/v1/account", token: token)
                XCTAssertEqual(answer.status, status, "\(what): \(answer.body)")
            }
            // A role that bypasses row-level security (granted to the authenticator by mistake)
            // is refused for every operation, not only the account check.
            try server.psql("CREATE ROLE eve BYPASSRLS; GRANT groupstore_user TO eve; GRANT eve TO authenticator")
            let eve = try gatewayRemote(user: "eve")
            do {
                _ = try await eve.fetchChanges(in: .private("alice"), since: nil, limit: 10)
                XCTFail("a role bypassing row-level security read through the gateway")
            } catch let error as CloudSyncError {
                XCTAssertEqual(error.code, .unauthorized, error.message)
                XCTAssertTrue(error.message.contains("bypasses row-level security"), error.message)
            }
            let missing = try await Self.post("http://127.0.0.1:\(gateways[0].port)/v1/account", token: nil)
            XCTAssertEqual(missing.status, 401)
            XCTAssertTrue(missing.body.contains("no token"), missing.body)
            // The gateway said nothing of the tokens (it logs at warning and above; never a token).
            for (_, token, _, _) in cases where token.count > 20 {
                XCTAssertFalse(gateways[0].process.errors.contains { $0.contains(token.suffix(20)) }, "a token in the gateway's log")
            }
        }

        func testHealthAndReadiness() async throws {
            let base = "http://127.0.0.1:\(gateways[0].port)"
            let health = try await Self.get(base + "/health")
            let ready = try await Self.get(base + "/ready")
            XCTAssertEqual(health.status, 200)
            XCTAssertEqual(ready.status, 200, ready.body)
        }

        func testABodyOverTheCap_isRefused413_andTheGatewayStaysUp() async throws {
            let token = try gatewaySecret.token(role: "alice")
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(gateways[0].port)/v1/assets/missing")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer " + token)
            request.body = .bytes(ByteBuffer(repeating: 0x20, count: 9 * 1024 * 1024))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            XCTAssertEqual(response.status.code, 413)
            let health = try await Self.get("http://127.0.0.1:\(gateways[0].port)/health")
            XCTAssertEqual(health.status, 200)
        }

        /// A push connection hears of the zones its role reads only: alice's
        /// private writes send bob nothing. (Hints that meet on a connection
        /// are merged, and a merged hint is "own" only if each was: the first
        /// hint bob gets after alice's writes and then his own is his own.)
        func testPushHints_reachOnlyTheZonesTheRoleReads() async throws {
            let alice = try gatewayRemote(user: "alice")
            let bob = try gatewayRemote(user: "bob")
            try await alice.prepare([notes])
            let messages = bob.pushMessages.stream(bufferingNewest: 1000)
            _ = try await bob.fetchChanges(in: .private("bob"), since: nil, limit: 10)
            let first = try await deadline(30, "bob's subscription") { () -> [String]? in
                for await message in messages where message.type == .subscribed && message.zones?.contains("private/bob") == true {
                    return message.zones
                }
                return nil
            }
            XCTAssertEqual(first, ["private/bob"])
            // Bob's client asks for alice's zone too: the gateway keeps his only.
            bob.zones.withLock { _ = $0.insert(.private("alice")) }
            bob.zonesChanged.yield(())
            let kept = try await deadline(30, "bob's second subscription") { () -> [String]? in
                for await message in messages where message.type == .subscribed { return message.zones }
                return nil
            }
            XCTAssertEqual(kept, ["private/bob"])
            for index in 0..<10 {
                let id = CloudRecordID(zone: .private("alice"), type: "notes", name: "a\(index)")
                _ = try await alice.modify([.save(id: id, baseTag: nil, fields: ["title": .text("private")], editedAt: Date())])
            }
            let own = CloudRecordID(zone: .private("bob"), type: "notes", name: "b1")
            _ = try await bob.modify([.save(id: own, baseTag: nil, fields: ["title": .text("his")], editedAt: Date())])
            let hint = try await deadline(30, "a hint for bob") { () -> GatewayWire.PushMessage? in
                for await message in messages where message.type == .hint { return message }
                return nil
            }
            XCTAssertEqual(hint.own, true, "bob heard of alice's private writes")
        }

        static func post(_ url: String, token: String?) async throws -> (status: Int, body: String) {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            if let token { request.headers.add(name: "Authorization", value: "Bearer " + token) }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            var body = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), body.readString(length: body.readableBytes) ?? "")
        }

        static func get(_ url: String) async throws -> (status: Int, body: String) {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
            var body = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), body.readString(length: body.readableBytes) ?? "")
        }
    }
#endif  // Gateway
