import Foundation
import ServiceLifecycle

/// A remote database the bridge syncs with: CloudKit's model (zones,
/// records, server change tags, change tokens, push hints), with nothing of
/// any particular server in it.
///
/// A remote is a swift-service-lifecycle `Service`, as Hummingbird's
/// `PersistDriver` is: its `run()` owns what lives as long as the remote is
/// used (a push connection, a connection pool, a file watch) and returns on
/// cancellation or graceful shutdown, finishing the ``pushHints()`` streams.
/// Run it in the same `ServiceGroup` as the ``CloudSync`` that uses it,
/// listed before it (a group stops its services in reverse order, so the
/// remote outlives the bridge):
///
/// ```swift
/// let remote = try PostgresRemote(url: url, logger: logger)
/// let sync = CloudSync(CloudSyncConfiguration(group: directory, remote: remote, logger: logger))
/// try await ServiceGroup(services: [store, remote, sync], logger: logger).run()
/// ```
///
/// Every call is `async`; there is no blocking form.
///
/// Conformances: ``MemoryRemote`` (in memory, for tests and examples), and in
/// modules of their own `EmbeddedRemote` (`GroupStoreCloudEmbedded`: a SQLite
/// file shared by the groups of one host) and `PostgresRemote`
/// (`GroupStoreCloudPostgres`: a PostgreSQL server). Each enforces the same
/// rules, checked by one conformance suite: tags change with every accepted save; a save or
/// delete whose base tag is stale is a conflict that returns the server's
/// record; deletes leave a tombstone so a stale edit of a deleted record is a
/// conflict too (with the delete's edit time where it is kept), as is a
/// version brought back without a tag over a later delete; a private zone is visible to its owner only; a public
/// record is written by its creator only; a shared zone is read by its owner
/// and the users it is shared with, and written by its owner and those it is
/// shared with read-write.
public protocol CloudDatabase: Service {
    /// Names the remote in messages (a path, or a URL without its password).
    var displayName: String { get }

    /// The user this connection acts as (checked at every start: a change of
    /// user is handled as ``CloudSyncConfiguration/accountChange`` says).
    func account() async throws -> String

    /// Where the remote's history stands — its latest change — and whether
    /// `mark`, the latest change a group saw, is still part of it (see
    /// ``CloudHistoryMark``); and the remote's clock. Asked before a bridge's
    /// first sync and after it finds a remote reset: its other calls have the
    /// history checked by the calls themselves (``modify(_:keeping:)``,
    /// ``fetchChanges(in:since:limit:keeping:)``).
    func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory

    /// Declares the record types this client syncs (creating them if new).
    /// - Throws: ``CloudSyncError/Code/scopeChanged`` when a type was first
    ///   synced with another scope.
    func prepare(_ types: [CloudRecordType]) async throws

    /// Applies changes, each on its own (a conflict in one does not stop the
    /// others), and says what happened to each, in order.
    /// - Throws: ``CloudSyncError/Code/batchTooLarge`` (split and retry),
    ///   ``CloudSyncError/Code/transient`` or ``CloudSyncError/Code/rateLimited``
    ///   (retry later: nothing was applied).
    func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult]

    /// ``modify(_:)`` if `mark` (the latest change the caller saw) is still
    /// part of the history, checked in the same transaction; and where the
    /// history stands after the changes. A remote that cannot do both in one
    /// transaction takes the default (``history(keeping:)`` before and after).
    func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<[CloudModifyResult]>

    /// ``fetchChanges(in:since:limit:)`` if `mark` is still part of the
    /// history, checked in the same read; and where the history stands. The
    /// history is checked first: a token the remote would refuse because it
    /// was replaced or restored is answered with the history, not the error.
    func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> CloudHistoryChecked<CloudChangeBatch>

    /// The changes of `zone` after `token` (`nil`: every live record).
    /// - Throws: ``CloudSyncError/Code/tokenExpired`` when the remote can no
    ///   longer say what changed since `token`: fetch from `nil` and diff;
    ///   ``CloudSyncError/Code/permissionDenied`` for a zone this user may not
    ///   read (another user's private zone; a shared zone not, or no longer,
    ///   shared with this user — the bridge then removes its records from
    ///   the group).
    func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch

    /// ``fetchChanges(in:since:limit:keeping:)`` narrowed to `subscription`
    /// (see ``CloudSubscription``): the records of a subscribed type in its
    /// subset, deletes of those that were in it at `token`, and those that
    /// left it since in ``CloudChangeBatch/movedOut``. With no token, a
    /// listing of the records in the subset. An empty subscription is a plain fetch.
    /// - Throws: ``CloudSyncError/Code/invalidConfiguration`` for a filter
    ///   this remote cannot evaluate on the type (a column it lacks, a type
    ///   it cannot compare), naming the table.
    func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?, subscription: CloudSubscription
    ) async throws -> CloudHistoryChecked<CloudChangeBatch>

    /// Of these records, those live on the remote, readable by this user and
    /// in `subscription`'s subset (a record of a type it does not subscribe
    /// is in it when live). A host asks it of its own uploads, and of what it
    /// holds when its subscription changes.
    func selected(_ ids: [CloudRecordID], subscription: CloudSubscription) async throws -> Set<CloudRecordID>

    /// Of records this client holds at these tags and a full listing of
    /// their zone lacks, those the remote never deleted: it was replaced, or
    /// restored from a copy older than those tags. They are uploaded again;
    /// the others were deleted on the remote (their tombstones may be gone).
    func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID>

    /// Which of these assets the remote lacks.
    func missingAssets(_ hashes: [String]) async throws -> Set<String>
    /// Stores an asset's bytes (idempotent).
    func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws
    /// An asset's bytes.
    func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8]

    /// Shares this user's shared zone `zone` (a name, see
    /// ``CloudZone/isZoneName(_:)``) with `user`, or with `access` `nil`
    /// stops sharing it with them. Idempotent; the zone needs no creating.
    /// - Throws: ``CloudSyncError/Code/invalidConfiguration`` for a bad zone
    ///   or user name.
    func share(_ zone: String, with user: String, access: CloudShareAccess?) async throws

    /// The shares of the zones this user owns, and those of other users'
    /// zones shared with this user.
    func shares() async throws -> [CloudShare]

    /// Push hints: an element whenever the remote may have changed, while
    /// the remote runs. Only a hint (the bridge fetches on start, after any
    /// reconnect, and on a timer anyway).
    func pushHints() -> AsyncStream<Void>

    /// Keeps what this host says of itself, for the fleet's operator (one
    /// entry per user and host, replaced by the next report); a remote
    /// without a fleet view keeps nothing (the default).
    func report(_ report: CloudHostReport) async throws
}

/// A synced table as the remote sees it: a record type in one scope.
public struct CloudRecordType: Hashable, Sendable, Codable {
    public var name: String
    public var scope: CloudScope
    /// The mapped columns, key columns first.
    public var columns: [CloudColumn]

    public init(name: String, scope: CloudScope, columns: [CloudColumn]) {
        self.name = name
        self.scope = scope
        self.columns = columns
    }
}

/// A mapped column: its name, what it holds and its SQLite declared type.
public struct CloudColumn: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable {
        case text, integer, real, boolean, date, blob, asset
        /// No declared type (SQLite's `ANY`): any type class.
        case any
        /// A reference to a record of `references` (a foreign key).
        case reference
    }

    public var name: String
    public var kind: Kind
    /// As declared in `CREATE TABLE` (`""` when none).
    public var declaredType: String
    public var notNull: Bool
    public var isKey: Bool
    /// For a reference, the referenced table.
    public var references: String?

    public init(name: String, kind: Kind, declaredType: String, notNull: Bool, isKey: Bool, references: String? = nil) {
        self.name = name
        self.kind = kind
        self.declaredType = declaredType
        self.notNull = notNull
        self.isKey = isKey
        self.references = references
    }
}

/// One user's access to a shared zone.
public struct CloudShare: Hashable, Sendable, Codable {
    public var zone: CloudZone
    public var user: String
    public var access: CloudShareAccess

    public init(zone: CloudZone, user: String, access: CloudShareAccess) {
        self.zone = zone
        self.user = user
        self.access = access
    }
}
