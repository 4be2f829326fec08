#if Gateway
    import Crypto
    import CryptoExtras
    import Foundation
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

        func testES256AndRS256PublicKeys_verifyTheirTokens_andNotEachOthers() throws {
            let p256 = P256.Signing.PrivateKey()
            let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let keys = try GatewayKeys(
                publicKeyFiles: [
                    try write(p256.publicKey.pemRepresentation, "p256.pem"), try write(rsa.publicKey.pemRepresentation, "rsa.pem"),
                ])
            let verifier = TokenVerifier(keys: keys)
            let claims: [String: Any] = ["role": "alice", "exp": Date().timeIntervalSince1970 + 60]
            let es = try token(alg: "ES256", claims: claims) { Array(try p256.signature(for: Crypto.SHA256.hash(data: $0)).rawRepresentation) }
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
            let swapped = rs.split(separator: ".").enumerated().map { $0.offset == 0 ? Substring(Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8))) : $0.element }
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

        func testHS256_claimsChecked_eachRefusalWithItsSentence() throws {
            let secret = try write(String(repeating: "s", count: 40), "jwt.secret")
            let verifier = TokenVerifier(keys: try GatewayKeys(secretFiles: [secret]))
            let now = Date()
            XCTAssertEqual(try verifier.verify(try GatewayToken.mint(secretFile: secret, role: "alice", expiresIn: 60)).role, "alice")
            let cases: [(String, String)] = [
                (try GatewayToken.mint(secretFile: secret, role: "alice", expiresIn: 10, now: now.addingTimeInterval(-100)), "the token expired at"),
                (
                    try GatewayToken.mint(secret: Array(String(repeating: "s", count: 40).utf8), role: "alice", expiresIn: nil, now: now, extra: ["nbf": now.timeIntervalSince1970 + 600]),
                    "the token is not valid before"
                ),
                (try GatewayToken.mint(secret: Array(String(repeating: "s", count: 40).utf8), role: "", expiresIn: nil, now: now), "role claim"),
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
    }
#endif  // Gateway
