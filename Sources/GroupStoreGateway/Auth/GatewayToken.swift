#if Gateway
    import Crypto
    import Foundation
    import GroupStoreCloud

    /// Mints tokens the gateway takes (`groupstore cloud token`): HS256, signed
    /// with a secret file's secret, naming a role. For operators and tests; an
    /// identity provider that signs ES256 or RS256 tokens mints its own.
    public enum GatewayToken {
        /// A compact JWT: header `{"alg":"HS256","kid":…,"typ":"JWT"}` (the key
        /// id lets the gateway tell a token of another key from a tampered one),
        /// claims `{"exp":…,"iat":…,"role":…}` (`exp` only with `expiresIn`)
        /// and `claims`, which a subscription's `claim(…)` reads (a device's
        /// `"site": 7`: see ``GatewayIdentity/claims``), and, with
        /// `restrictions`, a `where` claim (``GatewayIdentity/restrictions``);
        /// with `device`, a fleet device's token: `sub` names it, and `role`
        /// must be ``TokenVerifier/deviceRole`` (``GatewayIdentity/device``).
        /// - Throws: ``GatewayError/Code/badKey`` for a secret file that cannot
        ///   be read or is too short; ``GatewayError/Code/invalidConfiguration``
        ///   for a role that is no PostgreSQL role name, or a claim that is
        ///   `role`, `exp`, `iat`, `nbf` or `where`, or not text or a number,
        ///   or a restriction that reads `param(…)`.
        public static func mint(
            secretFile: String, role: String, expiresIn: TimeInterval? = nil, now: Date = Date(), claims: [String: CloudValue] = [:],
            restrictions: [String: CloudFilter] = [:], device: String? = nil
        ) throws -> String {
            guard !role.isEmpty, role.utf8.count <= 63 else {
                throw GatewayError(.invalidConfiguration, "a role is 1 to 63 bytes, not \(String(reflecting: role))")
            }
            var extra: [String: Any] = [:]
            if let device {
                guard role == TokenVerifier.deviceRole, TokenVerifier.isDeviceName(device) else {
                    throw GatewayError(
                        .invalidConfiguration,
                        "a device token's role is \(TokenVerifier.deviceRole), and its device 1 to 120 of A-Z a-z 0-9 . _ - @, not \(String(reflecting: device))"
                    )
                }
                extra["sub"] = device
            }
            for (name, value) in claims {
                guard !["role", "exp", "iat", "nbf", "where", "sub"].contains(name) else {
                    throw GatewayError(.invalidConfiguration, "the claim \(name) is the token's own: give it with its option")
                }
                switch value {
                case .text(let text): extra[name] = text
                case .integer(let integer): extra[name] = integer
                case .real(let real) where real.isFinite: extra[name] = real
                default: throw GatewayError(.invalidConfiguration, "the claim \(name) is \(value): a claim is text or a number")
                }
            }
            if !restrictions.isEmpty {
                for (table, filter) in restrictions.sorted(by: { $0.key < $1.key }) {
                    if let parameter = filter.parameters.sorted().first {
                        throw GatewayError(
                            .invalidConfiguration,
                            "the restriction of table \(table) reads param('\(parameter)'): a token's filter reads claims")
                    }
                }
                extra["where"] = Dictionary(restrictions.map { ($0.key.lowercased(), $0.value.text) }) { first, _ in first }
            }
            let secret = try GatewayKeys.secretBytes(secretFile)
            return try mint(secret: secret, role: role, expiresIn: expiresIn, now: now, extra: extra)
        }

        static func mint(secret: [UInt8], role: String, expiresIn: TimeInterval?, now: Date, extra: [String: Any] = [:]) throws -> String {
            let header: [String: Any] = ["alg": "HS256", "typ": "JWT", "kid": GatewayKeys.keyID(of: secret)]
            var claims: [String: Any] = ["role": role, "iat": Int(now.timeIntervalSince1970)]
            if let expiresIn { claims["exp"] = Int((now.timeIntervalSince1970 + expiresIn).rounded()) }
            for (key, value) in extra { claims[key] = value }
            let head = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
            let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
            let input = head + "." + body
            let signature = HMAC<Crypto.SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: secret))
            return input + "." + Base64URL.encode(Array(signature))
        }
    }
#endif  // Gateway
