import Foundation
import GroupStore
import Logging

/// Turns sync on for a group: which tables, which remote, which policy.
///
/// ```swift
/// var sync = CloudSyncConfiguration(group: "/var/lib/myapp/group", remote: try EmbeddedRemote(path: "/srv/cloud.sqlite", user: "alice"))
/// sync.privateTables = ["note", "tag", "note_tag"]
/// sync.policy = .fieldMerge
/// let bridge = CloudSync(sync)   // a Service: run it beside the store
/// ```
public struct CloudSyncConfiguration: Sendable {
    /// What to do when the remote's user is not the one this group synced with.
    public enum AccountChange: String, Sendable, CaseIterable {
        /// Sync nothing and fail with ``CloudSyncError/Code/accountChanged``
        /// (the default: a different user is more often a mistake — a
        /// command run as another Unix user — than a sign-in, and purging
        /// would delete edits never uploaded).
        case refuse
        /// Delete the synced tables' rows here (edits not uploaded included),
        /// then fetch the new user's.
        case purge
        /// Keep the rows and upload them all to the new user.
        case upload
    }

    /// The group directory.
    public var group: String
    public var remote: any CloudDatabase
    /// Tables only their owner sees.
    public var privateTables: [String] = []
    /// Tables everyone reads; each record is written by its creator.
    public var publicTables: [String] = []
    /// Tables whose rows live in ``sharedZone``: read by its owner and the
    /// users it is shared with, written by those with read-write access.
    public var sharedTables: [String] = []
    /// The shared zone of ``sharedTables``: one of this user's
    /// (`.shared(owner: user, name: "family")`), or another user's that is
    /// shared with this one. Required when ``sharedTables`` is not empty.
    public var sharedZone: CloudZone?
    /// Subscriptions, by table: of these synced tables only the rows the
    /// filter holds are synced to this group, as the remote evaluates it
    /// inside what the user may read (see ``CloudSubscription``). Rows that
    /// stop matching are removed here (author `cloud`), rows that start
    /// matching arrive; a row this group writes outside its subscription is
    /// uploaded, then removed here. A changed filter moves only the
    /// difference at the next sync.
    ///
    /// ```swift
    /// sync.subscriptions = ["job": try CloudFilter("site = param('site') AND done = 0")]
    /// sync.subscriptionParameters = ["site": .integer(7)]
    /// ```
    public var subscriptions: [String: CloudFilter] = [:]
    /// The values of the subscriptions' `param(…)`.
    public var subscriptionParameters: [String: CloudValue] = [:]
    /// Blob columns always stored as assets, by table.
    public var assetColumns: [String: Set<String>] = [:]
    /// Blobs of at least this many bytes become assets.
    public var assetThreshold = 64 * 1024
    public var policy: CloudConflictPolicy = .serverWins
    /// Rounds of resolve-and-retry for one record before it is parked.
    public var maxConflictRounds = 5
    public var accountChange: AccountChange = .refuse
    /// The bridge's member name; its lock is the syncing member's lock.
    public var member: MemberName
    /// How often a standby member tries to take over.
    public var standbyInterval: TimeInterval = 0.25
    /// How often a running bridge fetches with no push hint.
    public var fetchInterval: TimeInterval = 5
    /// First retry delay after a transient error (doubled, jittered, up to ``maxRetryDelay``).
    public var retryDelay: TimeInterval = 0.05
    public var maxRetryDelay: TimeInterval = 30
    public var logger: Logger
    /// Seconds added to this host's clock as the engine reads it (commit
    /// times and now): the tests' stand-in for a host whose clock is skewed
    /// (what `faketime` does to a whole process). 0 but in tests.
    package var clockSkew: TimeInterval = 0

    /// This host's clock, as the engine reads it.
    package func clock() -> Date { Date(timeIntervalSinceNow: clockSkew) }

    /// What this host is called in the fleet view (``CloudHostReport``):
    /// by default the machine's name and the group's directory.
    public var hostName: String
    /// The app's version, for the fleet view (`nil`: not said).
    public var appVersion: String?
    /// How often, in seconds, a bridge with nothing new to say reports
    /// itself anyway (``CloudHostReport``), so that the fleet view tells a
    /// quiet host from a stopped one.
    public var reportInterval: TimeInterval = 60
    /// How often, at most, a bridge whose only news is how far it has read
    /// (its change tokens moved) reports it (and at most
    /// ``reportInterval``): the fleet view's BEHIND for a running host is at
    /// most this old, since it syncs at least every ``fetchInterval``.
    /// Anything else new (pending, parked, an error, the app's version) is
    /// reported at the end of the sync it changed in. So a fleet's server
    /// does not write a report for every device on every change.
    public var progressInterval: TimeInterval = 5

    public init(group: String, remote: any CloudDatabase, logger: Logger = Logger(label: "GroupStoreCloud")) {
        self.group = group
        self.hostName = ProcessInfo.processInfo.hostName + ":" + group
        self.remote = remote
        // "cloud" is a valid member name.
        self.member = try! MemberName("cloud")
        self.logger = logger
    }
}
