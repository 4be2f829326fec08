import Foundation

/// The error type of the GroupStoreGateway module: a ``code`` to match and a
/// one-line ``message`` naming the file, address or token claim involved; the
/// error that caused it, if any, in ``underlying``.
///
/// Errors of the remote operations a gateway serves are the bridge's
/// `CloudSyncError`s, sent to the client with their code; this type is for the
/// gateway's own configuration and its authentication of requests.
///
/// ```swift
/// do { let keys = try GatewayKeys(secretFiles: ["/etc/groupstore/jwt.secret"]) }
/// catch GatewayError.badKey { … }
/// ```
public struct GatewayError: Error, Sendable, CustomStringConvertible, LocalizedError {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A key file is missing, unreadable, or not a key of a kind the gateway takes.
        public static let badKey = Code("badKey")
        /// A configuration value is wrong (the listening address, the pool size, TLS files).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A request carried no token, or one the gateway does not accept
        /// (malformed, expired, not yet valid, signed with another key, tampered
        /// with, or naming no role): HTTP 401.
        public static let unauthenticated = Code("unauthenticated")

        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? GatewayError)?.code == code
        }
    }

    public static let badKey = Code.badKey
    public static let invalidConfiguration = Code.invalidConfiguration
    public static let unauthenticated = Code.unauthenticated

    public var code: Code
    /// One line. For a refused token, the reason only: never the token.
    public var message: String
    public var underlying: (any Error)?

    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { message }
    public var errorDescription: String? { message }
}
