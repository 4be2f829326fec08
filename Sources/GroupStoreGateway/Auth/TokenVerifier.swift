#if Gateway
    import Crypto
    import CryptoExtras
    import Foundation
    import GroupStoreCloud

    /// Checks a bearer token as PostgREST does: a JWT (compact form) signed with
    /// one of the gateway's keys, whose algorithm is the key's own (HS256 for a
    /// secret, ES256 or RS256 for a public key: never `none`, never a public
    /// key used as a secret), not expired (`exp`) or not yet valid (`nbf`),
    /// with 30 s of leeway for clocks, and naming a `role`.
    ///
    /// Each part must be canonical base64url (RFC 7515: no padding, and no bits
    /// set past the last byte), and a header that lists critical extensions
    /// (`crit`) is refused: the gateway understands none (RFC 7515 §4.1.11).
    /// An ES256 signature is taken in either of its two equivalent forms (low
    /// or high S): common signers (BoringSSL, OpenSSL, Java) do not normalize
    /// S, so refusing one form would refuse about half of their tokens, and the
    /// limits count by identity, not by signature, so a second form gains nothing.
    ///
    /// Each refusal is a ``GatewayError/Code/unauthenticated`` error whose
    /// message says why in one line, never quoting the token.
    public struct TokenVerifier: Sendable {
        public let keys: GatewayKeys
        /// How far clocks may disagree.
        public var leeway: TimeInterval = 30

        public init(keys: GatewayKeys) { self.keys = keys }

        public func verify(_ token: String, now: Date = Date()) throws -> GatewayIdentity {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
                let signature = Base64URL.decode(parts[2])
            else { throw refused("the token is not a JWT (three base64url parts separated by dots)") }
            for (index, name) in ["header", "claims", "signature"].enumerated() where !Base64URL.isCanonical(parts[index]) {
                throw refused("the token's \(name) is not canonical base64url (bits set past its last byte)")
            }
            guard let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
                let algorithm = header["alg"] as? String
            else { throw refused("the token's header is not JSON naming its algorithm (alg)") }
            guard header["crit"] == nil else {
                throw refused("the token's header lists critical extensions (crit), and this gateway understands none")
            }
            let candidates = keys.keys.filter { $0.algorithm == algorithm }
            guard !candidates.isEmpty else {
                let taken = Set(keys.keys.map(\.algorithm)).sorted().joined(separator: ", ")
                throw refused("the token is signed with \(algorithm.prefix(16)); this gateway takes \(taken) (signed with another key)")
            }
            let kid = header["kid"] as? String
            var named = candidates
            if algorithm == "HS256", let kid {
                named = candidates.filter { if case .hmac(_, let id) = $0 { return id == kid } else { return false } }
                guard !named.isEmpty else {
                    throw refused("the token is signed with a key this gateway does not have (key id \(kid.prefix(16)))")
                }
            }
            let input = Array((parts[0] + "." + parts[1]).utf8)
            guard named.contains(where: { Self.verifies($0, signature: signature, input: input) }) else {
                if algorithm == "HS256", kid != nil {
                    throw refused("the token's signature does not match its contents (tampered with)")
                }
                throw refused("the token's signature does not verify with this gateway's keys (signed with another key, or tampered with)")
            }
            guard let claims = (try? JSONSerialization.jsonObject(with: Data(payloadBytes))) as? [String: Any] else {
                throw refused("the token's claims are not a JSON object")
            }
            var expiresAt: Date?
            if let value = claims["exp"] {
                guard let seconds = (value as? NSNumber)?.doubleValue else { throw refused("the token's exp claim is not a number") }
                expiresAt = Date(timeIntervalSince1970: seconds)
                if seconds + leeway < now.timeIntervalSince1970 {
                    throw refused("the token expired at \(Self.format(seconds))")
                }
            }
            if let value = claims["nbf"] {
                guard let seconds = (value as? NSNumber)?.doubleValue else { throw refused("the token's nbf claim is not a number") }
                if seconds - leeway > now.timeIntervalSince1970 {
                    throw refused("the token is not valid before \(Self.format(seconds))")
                }
            }
            guard let role = claims["role"] as? String else { throw refused("the token names no role (its role claim)") }
            guard !role.isEmpty, role.utf8.count <= 63, !role.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\u{7F}" }) else {
                throw refused("the token's role claim is not a PostgreSQL role name (1 to 63 bytes, no control characters)")
            }
            var device: String?
            if role == Self.deviceRole {
                guard let sub = claims["sub"] as? String, Self.isDeviceName(sub) else {
                    throw refused(
                        "the token's role is the fleet's (\(Self.deviceRole)) and its sub claim names no device (1 to 120 of A-Z a-z 0-9 . _ - @)"
                    )
                }
                device = sub
            }
            return GatewayIdentity(
                role: role, device: device, expiresAt: expiresAt, claims: Self.scalars(claims),
                restrictions: try Self.restrictions(claims["where"]))
        }

        /// The fleet's role: a token naming it acts for the device its `sub` names.
        public static let deviceRole = "groupstore_device"

        /// Whether `name` can name a device: 1 to 120 of `A-Z a-z 0-9 . _ - @`
        /// (with its prefix, a user name every remote takes).
        public static func isDeviceName(_ name: String) -> Bool {
            !name.isEmpty && name.utf8.count <= 120
                && name.unicodeScalars.allSatisfy {
                    $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-@".unicodeScalars.contains($0))
                }
        }

        /// The `where` claim parsed (see ``GatewayIdentity/restrictions``).
        static func restrictions(_ claim: Any?) throws -> [String: CloudFilter] {
            guard let claim else { return [:] }
            guard let tables = claim as? [String: Any] else {
                throw GatewayError(.unauthenticated, "the token's where claim is not an object of table name to filter")
            }
            var restrictions: [String: CloudFilter] = [:]
            for (table, value) in tables {
                let name = String(table.prefix(63))
                guard let text = value as? String else {
                    throw GatewayError(.unauthenticated, "the token's where claim for table \(name) is not a filter's text")
                }
                let filter: CloudFilter
                do {
                    filter = try CloudFilter(text)
                } catch let error as CloudSyncError {
                    throw GatewayError(.unauthenticated, "the token's where claim for table \(name): \(error.message)")
                }
                if let parameter = filter.parameters.sorted().first {
                    throw GatewayError(
                        .unauthenticated,
                        "the token's where claim for table \(name) reads param('\(parameter)'): a token's filter reads claims, not the client's parameters"
                    )
                }
                // Two spellings of one table ("job", "JOB"): both hold.
                restrictions[table.lowercased()] = restrictions[table.lowercased()].map { CloudFilter.both($0, filter) } ?? filter
            }
            return restrictions
        }

        /// The claims a filter may read: strings, integers, other numbers and
        /// booleans; objects, arrays and nulls are left out.
        static func scalars(_ claims: [String: Any]) -> [String: CloudValue] {
            var values: [String: CloudValue] = [:]
            for (name, value) in claims {
                switch value {
                case let text as String:
                    values[name] = .text(text)
                case let number as NSNumber:
                    // A boolean is an NSNumber of 1 or 0; a whole number, an integer.
                    if let integer = Int64(exactly: number.doubleValue) {
                        values[name] = .integer(integer)
                    } else {
                        values[name] = .real(number.doubleValue)
                    }
                default:
                    continue
                }
            }
            return values
        }

        private func refused(_ reason: String) -> GatewayError {
            GatewayError(.unauthenticated, reason)
        }

        static func verifies(_ key: GatewayKeys.Key, signature: [UInt8], input: [UInt8]) -> Bool {
            switch key {
            case .hmac(let secret, _):
                return HMAC<Crypto.SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: secret)
            case .p256(let publicKey):
                guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
                return publicKey.isValidSignature(ecdsa, for: Crypto.SHA256.hash(data: input))
            case .rsa(let publicKey):
                return publicKey.isValidSignature(
                    _RSA.Signing.RSASignature(rawRepresentation: signature), for: Crypto.SHA256.hash(data: input),
                    padding: .insecurePKCS1v1_5)
            }
        }

        static func format(_ seconds: Double) -> String {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: Date(timeIntervalSince1970: seconds.rounded(.down)))
        }
    }

    /// base64url without padding (RFC 7515), strict: other characters refused.
    enum Base64URL {
        static func encode(_ bytes: some Sequence<UInt8>) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }

        static func decode(_ text: Substring) -> [UInt8]? {
            guard text.utf8.allSatisfy({ isAlphabet($0) }), text.utf8.count % 4 != 1 else { return nil }
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
            return Data(base64Encoded: base64).map { [UInt8]($0) }
        }

        /// Whether `text` is the one spelling of its bytes: its last
        /// character sets no bits past the last byte (two characters hold one
        /// byte and 4 spare bits, three hold two bytes and 2 spare bits).
        static func isCanonical(_ text: Substring) -> Bool {
            guard let last = text.utf8.last, let value = value(of: last) else { return text.isEmpty }
            switch text.utf8.count % 4 {
            case 2: return value & 0x0F == 0
            case 3: return value & 0x03 == 0
            default: return true
            }
        }

        private static func value(of byte: UInt8) -> UInt8? {
            switch byte {
            case 0x41...0x5A: return byte - 0x41
            case 0x61...0x7A: return byte - 0x61 + 26
            case 0x30...0x39: return byte - 0x30 + 52
            case 0x2D: return 62
            case 0x5F: return 63
            default: return nil
            }
        }

        private static func isAlphabet(_ byte: UInt8) -> Bool {
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
        }
    }
#endif  // Gateway
