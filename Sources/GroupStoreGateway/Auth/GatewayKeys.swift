#if Gateway
    import Crypto
    import CryptoExtras
    import Foundation

    /// The keys a gateway checks tokens with, as PostgREST takes them: HS256
    /// secrets (a file holding the secret, at least 32 bytes), and ES256
    /// (P-256) or RS256 (2048 bits or more) public keys in PEM files. Several
    /// of each may be given at once, which is how keys are rotated: the new key
    /// is added, tokens are reissued with it, the old key is removed.
    public struct GatewayKeys: Sendable {
        enum Key: Sendable {
            case hmac(SymmetricKey, id: String)
            case p256(P256.Signing.PublicKey)
            case rsa(_RSA.Signing.PublicKey)

            /// The JWT `alg` the key verifies (and no other: a token's `alg`
            /// never chooses how a key is used).
            var algorithm: String {
                switch self {
                case .hmac: return "HS256"
                case .p256: return "ES256"
                case .rsa: return "RS256"
                }
            }
        }

        let keys: [Key]

        /// The smallest secret the gateway takes, in bytes (RFC 7518: at least the hash's size).
        public static let minimumSecretBytes = 32

        /// Reads the keys of `secretFiles` (HS256) and `publicKeyFiles` (ES256 or RS256, PEM).
        /// - Throws: ``GatewayError/Code/badKey`` naming the file.
        public init(secretFiles: [String] = [], publicKeyFiles: [String] = []) throws {
            var keys: [Key] = []
            for path in secretFiles { keys.append(try Self.secret(path)) }
            for path in publicKeyFiles { keys.append(try Self.publicKey(path)) }
            guard !keys.isEmpty else {
                throw GatewayError(.badKey, "no key to check tokens with: give --jwt-secret-file FILE or --jwt-public-key-file FILE")
            }
            self.keys = keys
        }

        init(keys: [Key]) { self.keys = keys }

        /// A secret's bytes, from its file (a trailing newline is not part of it).
        static func secretBytes(_ path: String) throws -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw GatewayError(.badKey, "cannot read the JWT secret file \(path)")
            }
            var bytes = [UInt8](data)
            while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
            guard bytes.count >= minimumSecretBytes else {
                throw GatewayError(
                    .badKey,
                    "the JWT secret in \(path) has \(bytes.count) bytes; HS256 needs at least \(minimumSecretBytes) (e.g. openssl rand -base64 48 > \(path))"
                )
            }
            return bytes
        }

        /// The key identifier of an HS256 secret: the first 16 hexadecimal digits
        /// of the SHA-256 of SHA-256 of its bytes (a token names its key without
        /// saying anything about it).
        static func keyID(of secret: [UInt8]) -> String {
            let inner = Data(Crypto.SHA256.hash(data: secret))
            return String(Crypto.SHA256.hash(data: inner).map { String(format: "%02x", $0) }.joined().prefix(16))
        }

        private static func secret(_ path: String) throws -> Key {
            let bytes = try secretBytes(path)
            return .hmac(SymmetricKey(data: bytes), id: keyID(of: bytes))
        }

        private static func publicKey(_ path: String) throws -> Key {
            guard let data = FileManager.default.contents(atPath: path), let pem = String(data: data, encoding: .utf8) else {
                throw GatewayError(.badKey, "cannot read the JWT public key file \(path)")
            }
            if let key = try? P256.Signing.PublicKey(pemRepresentation: pem) { return .p256(key) }
            do {
                return .rsa(try _RSA.Signing.PublicKey(pemRepresentation: pem))
            } catch {
                throw GatewayError(
                    .badKey, "\(path) is not a PEM public key the gateway takes (ES256: P-256; RS256: RSA of 2048 bits or more)",
                    underlying: error)
            }
        }
    }
#endif  // Gateway
