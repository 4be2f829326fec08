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
}

extension CloudDatabase {
    /// Keeps nothing: a remote without a fleet view.
    public func report(_ report: CloudHostReport) async throws {}
}
