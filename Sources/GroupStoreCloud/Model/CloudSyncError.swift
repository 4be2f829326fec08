import Foundation

/// The error type of the GroupStoreCloud module: a ``code`` to match and a
/// one-line ``message`` naming the table, remote or path involved; the error
/// that caused it, if any, in ``underlying``.
///
/// ```swift
/// do { _ = try await sync.syncOnce() }
/// catch CloudSyncError.tableRefused { … }
/// ```
public struct CloudSyncError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A table cannot be synced safely (its key, a reference, a column name); the message says why.
        public static let tableRefused = Code("tableRefused")
        /// The sync configuration is wrong (no tables, a table twice, a bad policy name).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// The remote cannot be used: missing directory, not a remote, unreachable.
        public static let badRemote = Code("badRemote")
        /// The remote failed for now (busy, unreachable for a moment): retried with backoff.
        public static let transient = Code("transient")
        /// The remote asked to slow down: retried after its delay.
        public static let rateLimited = Code("rateLimited")
        /// The batch was too large for the remote: split and sent again.
        public static let batchTooLarge = Code("batchTooLarge")
        /// The remote can no longer list changes since the token: the zone is fetched again and diffed.
        public static let tokenExpired = Code("tokenExpired")
        /// A table was first synced with another scope.
        public static let scopeChanged = Code("scopeChanged")
        /// The user may not read or write this.
        public static let permissionDenied = Code("permissionDenied")
        /// The remote does not accept who is asking: a gateway's token missing,
        /// expired, tampered with or signed with a key it does not know, or
        /// naming a role the gateway may not act as. Not about one zone or
        /// record: the sync fails, and a running bridge tries again later.
        public static let unauthorized = Code("unauthorized")
        /// The remote's user is not the one this group synced with, and
        /// ``CloudSyncConfiguration/accountChange`` is `refuse`.
        public static let accountChanged = Code("accountChanged")
        /// Another process is this group's syncing member.
        public static let syncingElsewhere = Code("syncingElsewhere")
        /// The local store failed (see ``CloudSyncError/underlying``).
        public static let store = Code("store")
        /// The bridge was stopped.
        public static let stopped = Code("stopped")

        /// Every code, by ``rawValue`` (a remote's answer over the wire names its code).
        package static let all: [String: Code] = Dictionary(
            uniqueKeysWithValues: [
                tableRefused, invalidConfiguration, badRemote, transient, rateLimited, batchTooLarge, tokenExpired, scopeChanged,
                permissionDenied, unauthorized, accountChanged, syncingElsewhere, store, stopped,
            ].map { ($0.rawValue, $0) })

        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? CloudSyncError)?.code == code
        }
    }

    public static let tableRefused = Code.tableRefused
    public static let invalidConfiguration = Code.invalidConfiguration
    public static let badRemote = Code.badRemote
    public static let transient = Code.transient
    public static let rateLimited = Code.rateLimited
    public static let batchTooLarge = Code.batchTooLarge
    public static let tokenExpired = Code.tokenExpired
    public static let scopeChanged = Code.scopeChanged
    public static let permissionDenied = Code.permissionDenied
    public static let unauthorized = Code.unauthorized
    public static let syncingElsewhere = Code.syncingElsewhere
    public static let accountChanged = Code.accountChanged
    public static let store = Code.store
    public static let stopped = Code.stopped

    public var code: Code
    /// One line, naming the table, remote or path.
    public var message: String
    /// For ``Code/rateLimited``: how long the remote asked to wait.
    public var retryAfter: TimeInterval?
    /// What caused it (a GRDB `DatabaseError`, a `GroupStoreError`, …).
    public var underlying: (any Error)?

    public init(_ code: Code, _ message: String, retryAfter: TimeInterval? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.underlying = underlying
    }

    public var description: String { message }

    /// Whether trying again later may succeed.
    public var isTransient: Bool { code == .transient || code == .rateLimited }
}
