import Foundation

/// What a bridge tells its remote of itself after a sync (``CloudDatabase/report(_:)``),
/// for the fleet's operator (`groupstore cloud fleet`): which host it is,
/// how far it has read each zone, what waits here, and how its last sync
/// ended. The engine sends it at the end of a sync when it changed (when
/// only its tokens did, at most every ``CloudSyncConfiguration/progressInterval``), or
/// ``CloudSyncConfiguration/reportInterval`` after the last one; a remote that keeps no fleet view
/// takes it and keeps nothing.
public struct CloudHostReport: Sendable, Codable, Hashable {
    /// The host, as ``CloudSyncConfiguration/hostName`` names it (one user
    /// may sync from several).
    public var host: String
    /// ``CloudSyncConfiguration/appVersion``, if set.
    public var appVersion: String?
    /// Each zone's change token as this host last read it (zone
    /// description to token): what its lag is counted from.
    public var tokens: [String: String]
    /// Local changes still to upload.
    public var pending: Int
    /// Records parked here (waiting for a parent, or refused).
    public var parked: Int
    /// Why the last sync failed (`nil`: it did not).
    public var lastError: String?
    /// When the last sync that did not fail ended (`nil`: none has).
    public var syncedAt: Date?

    public init(
        host: String, appVersion: String? = nil, tokens: [String: String] = [:], pending: Int = 0, parked: Int = 0,
        lastError: String? = nil, syncedAt: Date? = nil
    ) {
        self.host = host
        self.appVersion = appVersion
        self.tokens = tokens
        self.pending = pending
        self.parked = parked
        self.lastError = lastError
        self.syncedAt = syncedAt
    }

    /// The longest host name and app version a remote keeps, and the
    /// longest error, in bytes of UTF-8: a report is cut to them.
    public static let limits = (host: 200, appVersion: 64, error: 500)
    /// The most bytes the tokens take as a JSON object (what a remote keeps
    /// of them: 64 KiB at most on PostgreSQL).
    public static let maxTokenBytes = 48_000

    /// Why this report cannot be kept as it stands, or `nil`: an empty host,
    /// a text beyond ``limits`` or holding a NUL character, tokens beyond
    /// ``maxTokenBytes``, a negative count. A bridge's reports never are
    /// (it cuts its texts to the limits); a gateway refuses such a report
    /// before it collects it with others.
    public var refusal: String? {
        let texts: [(String, String?, Int)] = [
            ("host", host, Self.limits.host), ("app version", appVersion, Self.limits.appVersion),
            ("last error", lastError, Self.limits.error),
        ]
        if host.isEmpty { return "a host report names no host" }
        for case (let what, let text?, let limit) in texts {
            if text.utf8.count > limit { return "a host report's \(what) is longer than \(limit) bytes" }
            if text.utf8.contains(0) { return "a host report's \(what) holds a NUL character" }
        }
        // As JSON: each pair quoted, with a colon and a comma; a control character escaped (\u0001).
        let jsonBytes = { (text: String) in text.utf8.reduce(0) { $0 + ($1 < 0x20 ? 6 : 1) } }
        let tokenBytes = tokens.reduce(2) { $0 + jsonBytes($1.key) + jsonBytes($1.value) + 6 }
        if tokenBytes > Self.maxTokenBytes { return "a host report's tokens are more than \(Self.maxTokenBytes) bytes" }
        if tokens.contains(where: { $0.key.utf8.contains(0) || $0.value.utf8.contains(0) }) {
            return "a host report's tokens hold a NUL character"
        }
        if pending < 0 || parked < 0 { return "a host report's counts are negative" }
        return nil
    }
}

extension CloudDatabase {
    /// Keeps nothing: a remote without a fleet view.
    public func report(_ report: CloudHostReport) async throws {}
}
