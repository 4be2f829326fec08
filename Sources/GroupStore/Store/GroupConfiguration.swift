import Foundation
import GRDB
import Logging

/// How to open a group: where it is, who this process is, what it cares about.
///
/// The counterpart of CDShare's `ApplicationGroupInfo`.
public struct GroupConfiguration: Sendable {
    /// The group directory. Created (with its parents) if missing and
    /// ``createIfMissing`` is true.
    public var directory: String
    /// This process's member name. One live process per name.
    public var member: MemberName
    /// Create the group directory and database when missing.
    public var createIfMissing = true
    /// The entities (tables) whose saves this member receives; `nil` for all.
    /// Like CDShare's `sharedInScopeEntityNames`. GRDB observations are
    /// refreshed for every changed table regardless.
    public var inScopeEntityNames: Set<String>?
    /// This process only writes (a command-line tool, a script): it keeps no
    /// cursor, so it never holds back pruning and is never waited for. Saves
    /// may still be delivered to it while it runs (nothing about them is
    /// kept). Every other member is a consumer: its starting point is written
    /// when it joins, before it is reported live, and the history it has not
    /// processed is kept for it (up to ``retention``).
    public var writesOnly = false
    /// For members that handle saves through `.groupStoreDidSave` observers
    /// (the CDShare habit) rather than ``GroupStore/saves()`` streams: a save
    /// counts as processed once its notification was posted (every observer
    /// has run), so the durable cursor moves on without a stream. Off by
    /// default, so a stream that subscribes late still gets every save (the
    /// saves posted before it subscribed would count as processed); a member
    /// that posts saves nothing processes says so in its log.
    public var notificationsCountAsProcessed = false
    /// Whether delivered saves are posted as `.groupStoreDidSave`. A member
    /// that handles saves through ``GroupStore/saves()`` streams (or
    /// ``synchronousDelivery``) only can turn it off: each save then costs
    /// one thread wake-up less. (With ``notificationsCountAsProcessed`` on,
    /// a save then counts as processed as soon as it is merged.)
    public var postsNotifications = true
    /// Called with each save for this member (as streams get them: not its
    /// own, in scope, in sequence order) on the store's delivery queue, the moment
    /// it is read from the history: no hop to a task or another queue, which
    /// saves tens of microseconds per save. A save counts as processed once
    /// the handler returns (so, as with ``notificationsCountAsProcessed``, a
    /// stream that subscribes later starts after it). Streams and
    /// notifications still get every save merged while they exist.
    ///
    /// Keep it short: merging waits for it. It may call the store's blocking
    /// API (``GroupStore/GroupStore/closeBlocking()``,
    /// ``GroupStore/GroupStore/writeBlocking(_:)``,
    /// ``GroupStore/GroupStore/startBlocking()``).
    public var synchronousDelivery: (@Sendable (Save) -> Void)?
    /// The tables whose changes the history records.
    public var trackedTables: TrackedTables = .all
    /// Your GRDB migrations, run when the store opens (history triggers are
    /// installed for the tables they create, and their rows are published),
    /// one at a time: a failing one is named in the error. A migrator with
    /// `eraseDatabaseOnSchemaChange` is refused (it would erase the shared
    /// database, the history's tables being "changes", at every open).
    public var migrator: DatabaseMigrator?
    /// History and payloads older than this are pruned even if a member has
    /// not consumed them (so a dead member cannot pin the disk).
    public var retention: TimeInterval = 7 * 24 * 3600
    /// How often a started store prunes; `nil` never (use ``GroupStore/prune(now:)``).
    public var pruneInterval: TimeInterval? = 60
    /// How long the delivered cursor may stay unsaved. A crash re-delivers at
    /// most this much at the next start.
    public var cursorFlushInterval: TimeInterval = 0.05
    /// How long a write waits for another process's write lock before
    /// failing with `SQLITE_BUSY`.
    public var busyTimeout: TimeInterval = 10
    /// Runs on every new SQLite connection (functions, pragmas, collations).
    public var prepareDatabase: (@Sendable (Database) throws -> Void)?
    /// Where the store logs (info level and below).
    public var logger: Logger
    /// Says so in the log when the store has not started a few seconds after
    /// it opened (its observers and subscribers would be deaf). Off for the
    /// cloud bridge's one-shot sync, which reads the history itself.
    package var warnsWhenNotStarted = true

    public init(directory: String, member: MemberName, logger: Logger = Logger(label: "GroupStore")) {
        self.directory = directory
        self.member = member
        self.logger = logger
    }

    /// GRDB's configuration for the shared pool: WAL (GRDB's default for a
    /// pool), and a busy handler that retries with sub-millisecond backoff,
    /// because SQLite's default sleeps a millisecond or more between tries and
    /// contending writers then wait for seconds.
    var databaseConfiguration: Configuration {
        var configuration = Self.sharedDatabaseConfiguration(label: "GroupStore.\(member)", busyTimeout: busyTimeout)
        let prepare = prepareDatabase
        configuration.prepareDatabase { db in try prepare?(db) }
        return configuration
    }

    /// The settings every connection to a shared database uses.
    static func sharedDatabaseConfiguration(label: String, busyTimeout: TimeInterval) -> Configuration {
        var configuration = Configuration()
        configuration.label = label
        let deadlineTries = Int(busyTimeout / 0.0005) + 16
        configuration.busyMode = .callback { tries in
            guard tries < deadlineTries else { return false }
            // 20 µs doubling up to 500 µs.
            usleep(UInt32(min(20 << min(tries, 5), 500)))
            return true
        }
        return configuration
    }
}
