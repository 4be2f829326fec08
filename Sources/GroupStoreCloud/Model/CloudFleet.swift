import Foundation

/// The fleet as a remote's operator sees it (`groupstore cloud fleet`):
/// each host's last report (``CloudHostReport``), and what follows from it
/// now.
public struct CloudFleet: Sendable, Codable, Hashable {
    public struct Host: Sendable, Codable, Hashable {
        /// The user it syncs as (a role, or `device+<sub>`).
        public var user: String
        public var host: String
        public var appVersion: String?
        public var pending: Int
        public var parked: Int
        public var lastError: String?
        /// When its last sync that did not fail ended.
        public var syncedAt: Date?
        /// When it last reported (the remote's clock).
        public var seenAt: Date
        /// The changes logged in its zones after the positions it reported,
        /// of records another user wrote last (its own come back as echoes).
        public var behind: Int

        public init(
            user: String, host: String, appVersion: String?, pending: Int, parked: Int, lastError: String?, syncedAt: Date?, seenAt: Date,
            behind: Int
        ) {
            self.user = user
            self.host = host
            self.appVersion = appVersion
            self.pending = pending
            self.parked = parked
            self.lastError = lastError
            self.syncedAt = syncedAt
            self.seenAt = seenAt
            self.behind = behind
        }

        /// Seconds the host has been behind: since its last sync that did
        /// not fail, while changes wait for it (0 when none do).
        public func lag(now: Date) -> Double {
            guard behind > 0 else { return 0 }
            return max(0, now.timeIntervalSince(syncedAt ?? seenAt))
        }

        /// What an operator should look at, worst first: `error` (its last
        /// sync failed), `silent` (no report for `silentAfter` seconds:
        /// stopped, or cut off), `parked`, `pending`, `behind`; `ok` when none.
        public func states(now: Date, silentAfter: Double) -> [String] {
            var states: [String] = []
            if lastError != nil { states.append("error") }
            if now.timeIntervalSince(seenAt) > silentAfter { states.append("silent") }
            if parked > 0 { states.append("parked") }
            if pending > 0 { states.append("pending") }
            if behind > 0 { states.append("behind") }
            return states.isEmpty ? ["ok"] : states
        }
    }

    public var hosts: [Host]
    /// The remote's clock when it answered.
    public var now: Date

    public init(hosts: [Host], now: Date) {
        self.hosts = hosts
        self.now = now
    }
}
