#if Gateway
    import Crypto
    import Foundation
    import PostgresTestServer
    import XCTest

    @testable import GroupStoreGateway

    /// Whom a real `groupstore serve` takes a request from (issue 41, findings
    /// 6 and 8): one rate bucket per role whatever the token's spelling,
    /// reserved roles and critical header extensions refused, and a role
    /// changed on the server refused within the role checks' lifetime.
    final class GatewayTokenTests: GatewayLimitsTestCase {
        /// `POST /v1/account` (or `path`) with `token`; its answer.
        func call(_ port: Int, token: String, _ method: String = "POST", _ path: String = "/v1/account") throws -> RawResponse {
            let connection = try RawConnection(port: port)
            try connection.send(
                "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nContent-Length: 0\r\n\r\n")
            return try connection.readResponse(timeout: 30)
        }

        func testTokensOfOneRole_shareOneRateBucket_andANonCanonicalSpellingIsRefused() throws {
            let gateway = try startGateway(["--rate", "1"])
            let first = try gatewaySecret.token(role: "alice", expiresIn: 3600)
            let second = try gatewaySecret.token(role: "alice", expiresIn: 7200)
            XCTAssertNotEqual(first, second)
            // The signature's last character holds 2 bits past its 32 bytes: set one.
            var spelled = Array(first)
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            spelled[spelled.count - 1] = alphabet[alphabet.firstIndex(of: spelled.last!)! | 1]
            let respelled = try call(gateway.port, token: String(spelled))
            XCTAssertEqual(respelled.status, 401, respelled.body)
            XCTAssertTrue(respelled.message.contains("the token's signature is not canonical base64url"), respelled.message)
            // A burst of 2 for the role, whichever token it presents.
            XCTAssertEqual(try call(gateway.port, token: first).status, 200)
            XCTAssertEqual(try call(gateway.port, token: first).status, 200)
            let other = try call(gateway.port, token: second)
            XCTAssertEqual(other.status, 429, "a second token of the role had a bucket of its own: \(other.body)")
            XCTAssertTrue(other.message.contains("too many requests for role \"alice\""), other.message)
        }

        func testReservedRolesAndCriticalHeaderExtensions_areRefusedWithTheirSentence() throws {
            let gateway = try startGateway()
            let cases: [(what: String, token: String, status: Int, sentence: String)] = [
                (
                    "the users' group role", try gatewaySecret.token(role: "groupstore_user"), 403,
                    "the gateway may not act as role \"groupstore_user\": it is the group role of the users, not a user"
                ),
                ("a predefined role", try gatewaySecret.token(role: "pg_read_all_data"), 403, "pg_ roles are PostgreSQL's own"),
                (
                    "a crit header", try token(header: ["alg": "HS256", "typ": "JWT", "crit": ["exp"]], role: "alice"), 401,
                    "token refused: the token's header lists critical extensions (crit), and this gateway understands none"
                ),
            ]
            for (what, token, status, sentence) in cases {
                let answer = try call(gateway.port, token: token)
                XCTAssertEqual(answer.status, status, "\(what): \(answer.body)")
                XCTAssertTrue(answer.message.contains(sentence), "\(what): \(answer.message)")
            }
            // The same token without crit is taken: the refusal was the header's.
            XCTAssertEqual(try call(gateway.port, token: try token(header: ["alg": "HS256", "typ": "JWT"], role: "alice")).status, 200)
        }

        /// The role checks' lifetime is the window of a mistake made on a role:
        /// 5 s, where it was a minute.
        func testARoleMadeToBypassRowLevelSecurity_isRefusedWithinTheRoleCheckLifetime() throws {
            let gateway = try startGateway()
            let token = try gatewaySecret.token(role: "alice")
            XCTAssertEqual(try call(gateway.port, token: token, "GET", "/v1/shares").status, 200)
            try server.psql("ALTER ROLE alice BYPASSRLS")
            let changed = Date()
            var last: RawResponse?
            eventually("alice refused once she bypasses row-level security", timeout: 20) {
                last = try? call(gateway.port, token: token, "GET", "/v1/shares")
                return last?.status == 403
            }
            XCTAssertTrue(last?.message.contains("bypasses row-level security") == true, last?.body ?? "")
            XCTAssertLessThan(
                Date().timeIntervalSince(changed), RoleChecks.defaultLifetime + 5, "the window of a role changed on the server")
        }

        /// An HS256 token with `header`, signed with the gateway's secret.
        private func token(header: [String: Any], role: String) throws -> String {
            let secret = try GatewayKeys.secretBytes(gatewaySecret.path)
            var header = header
            header["kid"] = GatewayKeys.keyID(of: secret)
            let claims: [String: Any] = ["role": role, "exp": Int(Date().timeIntervalSince1970) + 600]
            let input =
                Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])) + "."
                + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
            let signature = HMAC<Crypto.SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: secret))
            return input + "." + Base64URL.encode(Array(signature))
        }
    }
#endif  // Gateway
