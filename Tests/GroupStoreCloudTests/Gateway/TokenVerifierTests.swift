#if Gateway
    import Crypto
    import CryptoExtras
    import Foundation
    import GroupStoreCloud
    import XCTest

    @testable import GroupStoreGateway

    /// The gateway's token check on its own: each kind of key it takes, and
    /// each token it refuses, with its sentence.
    final class TokenVerifierTests: XCTestCase {
        var directory = ""

        override func setUpWithError() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }

        override func tearDownWithError() throws {
            try? FileManager.default.removeItem(atPath: directory)
        }

        func write(_ text: String, _ name: String) throws -> String {
            let path = directory + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// A compact JWT of `claims` with header `alg`, signed by `sign`.
        func token(alg: String, claims: [String: Any], sign: ([UInt8]) throws -> [UInt8]) throws -> String {
            let header = Base64URL.encode(try JSONSerialization.data(withJSONObject: ["alg": alg, "typ": "JWT"]))
            let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
            let input = header + "." + body
            return input + "." + Base64URL.encode(try sign(Array(input.utf8)))
        }

        /// A token verified once is taken again while it is valid, and
        /// refused with the verifier's sentence once it expired.
        func testAVerifiedToken_isKeptUntilItExpires() throws {
            let secret = try write(String(repeating: "k", count: 40), "secret")
            let tokens = VerifiedTokens(verifier: TokenVerifier(keys: try GatewayKeys(secretFiles: [secret])))
            let start = Date()
            let token = try GatewayToken.mint(secretFile: secret, role: "alice", expiresIn: 60, now: start)
            XCTAssertEqual(try tokens.identity(token, now: start).role, "alice")
            XCTAssertEqual(try tokens.identity(token, now: start + 89).role, "alice", "within exp and the 30 s leeway")
            XCTAssertThrowsError(try tokens.identity(token, now: start + 91)) { error in
                XCTAssertTrue("\(error)".contains("expired"), "\(error)")
            }
            var tampered = Array(token)
            tampered[tampered.count - 2] = tampered[tampered.count - 2] == "A" ? "B" : "A"
            XCTAssertThrowsError(try tokens.identity(String(tampered), now: start)) { error in
                XCTAssertTrue("\(error)".contains("signature"), "\(error)")
            }
        }

        func testES256AndRS256PublicKeys_verifyTheirTokens_andNotEachOthers() throws {
            let p256 = P256.Signing.PrivateKey()
            let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let keys = try GatewayKeys(
                publicKeyFiles: [
                    try write(p256.publicKey.pemRepresentation, "p256.pem"), try write(rsa.publicKey.pemRepresentation, "rsa.pem"),
                ])
            let verifier = TokenVerifier(keys: keys)
            let claims: [String: Any] = ["role": "alice", "exp": Date().timeIntervalSince1970 + 60]
            let es = try token(alg: "ES256", claims: claims) {
                Array(try p256.signature(for: Crypto.SHA256.hash(data: $0)).rawRepresentation)
            }
            let rs = try token(alg: "RS256", claims: claims) {
                Array(try rsa.signature(for: Crypto.SHA256.hash(data: $0), padding: .insecurePKCS1v1_5).rawRepresentation)
            }
            XCTAssertEqual(try verifier.verify(es).role, "alice")
            XCTAssertEqual(try verifier.verify(rs).role, "alice")
            // An ES256 token of another key, and an RS256 signature presented as ES256.
            let other = P256.Signing.PrivateKey()
            let foreign = try token(alg: "ES256", claims: claims) {
                Array(try other.signature(for: Crypto.SHA256.hash(data: $0)).rawRepresentation)
            }
            XCTAssertThrowsError(try verifier.verify(foreign)) { error in
                XCTAssertTrue("\(error)".contains("does not verify with this gateway's keys"), "\(error)")
            }
            let swapped = rs.split(separator: ".").enumerated().map {
                $0.offset == 0 ? Substring(Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8))) : $0.element
            }
            .joined(separator: ".")
            XCTAssertThrowsError(try verifier.verify(swapped))
        }

        func testAPublicKeyIsNeverUsedAsAnHMACSecret_norIsNone() throws {
            let p256 = P256.Signing.PrivateKey()
            let pem = p256.publicKey.pemRepresentation
            let verifier = TokenVerifier(keys: try GatewayKeys(publicKeyFiles: [try write(pem, "p256.pem")]))
            // The classic confusion: HS256 "signed" with the public key's text as the secret.
            let confused = try token(alg: "HS256", claims: ["role": "alice"]) {
                Array(HMAC<Crypto.SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: Array(pem.utf8))))
            }
            XCTAssertThrowsError(try verifier.verify(confused)) { error in
                XCTAssertTrue("\(error)".contains("signed with HS256; this gateway takes ES256"), "\(error)")
            }
            let none = try token(alg: "none", claims: ["role": "alice"]) { _ in [] }
            XCTAssertThrowsError(try verifier.verify(none)) { error in
                XCTAssertTrue("\(error)".contains("signed with none"), "\(error)")
            }
        }

        /// RFC 7515's base64url has one spelling per byte string: a last
        /// character with spare bits set is another spelling of the same
        /// bytes, refused in each part.
        func testNonCanonicalBase64URL_isRefused_inEachPart() throws {
            let secret = try write(String(repeating: "s", count: 40), "jwt.secret")
            let verifier = TokenVerifier(keys: try GatewayKeys(secretFiles: [secret]))
            let token = try GatewayToken.mint(secretFile: secret, role: "alice", expiresIn: 60)
            XCTAssertEqual(try verifier.verify(token).role, "alice")
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            for (index, name) in ["header", "claims", "signature"].enumerated() {
                var parts = token.split(separator: ".").map { Array($0) }
                guard parts[index].count % 4 != 0 else { continue }
                let last = alphabet.firstIndex(of: parts[index].last!)!
                parts[index][parts[index].count - 1] = alphabet[last | 1]
                let original = token.split(separator: ".")[index]
                XCTAssertEqual(Base64URL.decode(Substring(String(parts[index]))), Base64URL.decode(original), "the same bytes")
                let respelled = parts.map { String($0) }.joined(separator: ".")
                XCTAssertThrowsError(try verifier.verify(respelled), name) { error in
                    XCTAssertTrue("\(error)".contains("the token's \(name) is not canonical base64url"), "\(name): \(error)")
                }
            }
        }

        /// An ES256 signature's two forms (S and n − S) verify alike: both are
        /// taken (common signers do not normalize S), and both are the same
        /// identity, so the second form gains no rate of its own.
        func testES256SignaturesInEitherSForm_areTaken_asOneIdentity() throws {
            let p256 = P256.Signing.PrivateKey()
            let verifier = TokenVerifier(keys: try GatewayKeys(publicKeyFiles: [try write(p256.publicKey.pemRepresentation, "p256.pem")]))
            let signed = try token(alg: "ES256", claims: ["role": "alice"]) {
                Array(try p256.signature(for: Crypto.SHA256.hash(data: $0)).rawRepresentation)
            }
            var parts = signed.split(separator: ".").map(String.init)
            let signature = Base64URL.decode(Substring(parts[2]))!
            // n − S, in 32 bytes big-endian (n: the order of P-256).
            let order: [UInt8] = [
                0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
            ]
            var other = [UInt8](repeating: 0, count: 32)
            var borrow = 0
            for index in (0..<32).reversed() {
                let difference = Int(order[index]) - Int(signature[32 + index]) - borrow
                other[index] = UInt8((difference + 256) % 256)
                borrow = difference < 0 ? 1 : 0
            }
            parts[2] = Base64URL.encode(Array(signature.prefix(32)) + other)
            let first = try verifier.verify(signed)
            let second = try verifier.verify(parts.joined(separator: "."))
            XCTAssertEqual(first.key, second.key)
            XCTAssertEqual(first.key, "role:alice")
        }

        func testACriticalHeaderExtension_isRefused() throws {
            let secret = String(repeating: "s", count: 40)
            let verifier = TokenVerifier(keys: try GatewayKeys(secretFiles: [try write(secret, "jwt.secret")]))
            let header = Base64URL.encode(try JSONSerialization.data(withJSONObject: ["alg": "HS256", "crit": ["b64"], "b64": false]))
            let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: ["role": "alice"]))
            let input = header + "." + body
            let signature = HMAC<Crypto.SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: Array(secret.utf8)))
            XCTAssertThrowsError(try verifier.verify(input + "." + Base64URL.encode(Array(signature)))) { error in
                XCTAssertTrue("\(error)".contains("critical extensions (crit)"), "\(error)")
            }
        }

        func testHS256_claimsChecked_eachRefusalWithItsSentence() throws {
            let secret = try write(String(repeating: "s", count: 40), "jwt.secret")
            let verifier = TokenVerifier(keys: try GatewayKeys(secretFiles: [secret]))
            let now = Date()
            XCTAssertEqual(try verifier.verify(try GatewayToken.mint(secretFile: secret, role: "alice", expiresIn: 60)).role, "alice")
            let cases: [(String, String)] = [
                (
                    try GatewayToken.mint(secretFile: secret, role: "alice", expiresIn: 10, now: now.addingTimeInterval(-100)),
                    "the token expired at"
                ),
                (
                    try GatewayToken.mint(
                        secret: Array(String(repeating: "s", count: 40).utf8), role: "alice", expiresIn: nil, now: now,
                        extra: ["nbf": now.timeIntervalSince1970 + 600]),
                    "the token is not valid before"
                ),
                (
                    try GatewayToken.mint(secret: Array(String(repeating: "s", count: 40).utf8), role: "", expiresIn: nil, now: now),
                    "role claim"
                ),
                ("a.b", "is not a JWT"),
                ("", "is not a JWT"),
            ]
            for (token, sentence) in cases {
                XCTAssertThrowsError(try verifier.verify(token)) { error in
                    XCTAssertEqual((error as? GatewayError)?.code, .unauthenticated)
                    XCTAssertTrue("\(error)".contains(sentence), "\(sentence): \(error)")
                }
            }
            XCTAssertThrowsError(try GatewayKeys(secretFiles: [try write("short", "short.secret")])) { error in
                XCTAssertEqual((error as? GatewayError)?.code, .badKey)
            }
        }

        /// The `where` claim (``GatewayIdentity/restrictions``): parsed, by
        /// table in lower case; one that is not an object of filters, does
        /// not parse, or reads the client's `param(…)` refuses the token.
        func testAWhereClaim_isParsedPerTable_andAMalformedOneRefusesTheToken() throws {
            let secret = String(repeating: "s", count: 40)
            let verifier = TokenVerifier(keys: try GatewayKeys(secretFiles: [try write(secret, "jwt.secret")]))
            func minted(_ claim: Any) throws -> String {
                try GatewayToken.mint(secret: Array(secret.utf8), role: "alice", expiresIn: 60, now: Date(), extra: ["where": claim])
            }
            let identity = try verifier.verify(try minted(["Job": "site = claim('site')", "note": "TRUE"]))
            XCTAssertEqual(identity.restrictions.keys.sorted(), ["job", "note"])
            XCTAssertEqual(identity.restrictions["job"]?.claims, ["site"])
            let cases: [(Any, String)] = [
                ("site = 7", "the token's where claim is not an object of table name to filter"),
                (["job": 7], "the token's where claim for table job is not a filter's text"),
                (["job": "site = (SELECT 1)"], "the token's where claim for table job:"),
                (["job": "site = param('site')"], "reads param('site'): a token's filter reads claims"),
            ]
            for (claim, sentence) in cases {
                XCTAssertThrowsError(try verifier.verify(try minted(claim))) { error in
                    XCTAssertEqual((error as? GatewayError)?.code, .unauthenticated)
                    XCTAssertTrue("\(error)".contains(sentence), "\(sentence): \(error)")
                }
            }
            XCTAssertThrowsError(
                try GatewayToken.mint(
                    secretFile: try write(secret, "other.secret"), role: "alice",
                    restrictions: ["job": try CloudFilter("site = param('s')")])
            ) { error in XCTAssertEqual((error as? GatewayError)?.code, .invalidConfiguration) }
        }
    }
#endif  // Gateway
