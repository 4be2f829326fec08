import GroupStoreCloud
import ServiceLifecycle

/// What a gateway serves requests from: the remote operations acting as a
/// role, and the notifications of changes that become push hints.
///
/// A backend is a `Service`, as Hummingbird's persist drivers are: its
/// `run()` owns its connections (a pool and a listener) until shutdown.
/// ``PostgresGatewayBackend`` serves a PostgreSQL remote;
/// ``MemoryGatewayBackend`` an in-memory one, for tests and examples.
public protocol GatewayBackend: Service {
    /// Names the backend in messages (a URL without its password).
    var displayName: String { get }

    /// The operations acting as `identity` (its role, and for a fleet's
    /// device, the device: ``GatewayIdentity/device``), whose writes'
    /// notifications carry `origin` (the client's, or `nil`).
    func acting(as identity: GatewayIdentity, origin: String?) -> any GatewayRoleDatabase

    /// ``acting(as:origin:)`` for a request that must have ended by
    /// `deadline`: a backend that can stop its statements then does, so that a
    /// request answered "try again" at its deadline commits nothing later and
    /// holds no connection (``PostgresGatewayBackend``: `statement_timeout`).
    /// The default ignores the deadline.
    func acting(as identity: GatewayIdentity, origin: String?, deadline: ContinuousClock.Instant) -> any GatewayRoleDatabase

    /// The notices of changes, while the backend runs.
    func notices() -> AsyncStream<GatewayNotice>

    /// Where the notices are best followed (the thread they arrive on), if
    /// anywhere in particular; the default is none.
    var noticeExecutor: (any TaskExecutor)? { get }

    /// The tag notices use for `text` (a zone's description, or `member:`
    /// and a user); `nil` while notices carry no tags (every notice is then
    /// for every zone).
    func tag(of text: String) -> String?

    /// Whether the backend can serve requests now (its database reached, its
    /// listener connected): the gateway's readiness.
    func isReady() async -> Bool

    /// Whether its notices are followed now: a change made while they are
    /// not sends none (``FetchMemory`` answers nothing meanwhile).
    var isListening: Bool { get }

    /// Operations holding or waiting for a database connection, and the most
    /// connections the backend opens for them.
    var poolUse: (leases: Int, size: Int) { get }

    /// Keeps the host reports the gateway collected (``HostReports``), each
    /// as its identity's: in one transaction where the backend can. The
    /// default keeps each as ``GatewayRoleDatabase/report(_:)`` acting as its
    /// identity.
    func report(_ reports: [(identity: GatewayIdentity, report: CloudHostReport)]) async throws
}

/// The remote operations, each acting as one role (``GatewayBackend/acting(as:origin:)``).
public protocol GatewayRoleDatabase: Sendable {
    func account() async throws -> String
    func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory
    func prepare(_ types: [CloudRecordType]) async throws
    func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult]
    /// A page of changes, and whether changes after it are held back for now
    /// (the client fetches again shortly).
    func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> (CloudChangeBatch, heldBack: Bool)
    /// ``modify(_:)`` on condition that `mark` is part of the history, and
    /// the history after it (see ``GroupStoreCloud/CloudDatabase/modify(_:keeping:)``).
    func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<[CloudModifyResult]>
    /// ``fetchChanges(in:since:limit:)`` on condition that `mark` is part of
    /// the history, and the history (see ``GroupStoreCloud/CloudDatabase/fetchChanges(in:since:limit:keeping:)``).
    func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool)
    /// ``fetchChanges(in:since:limit:keeping:)`` narrowed to `subscription`,
    /// its `claim(…)` bound to `claims` (the verified token's; see
    /// ``GroupStoreCloud/CloudDatabase/fetchChanges(in:since:limit:keeping:subscription:)``).
    func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?, subscription: CloudSubscription,
        claims: [String: CloudValue]
    ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool)
    /// Of these records, those live, readable by the role and in
    /// `subscription`'s subset, its `claim(…)` bound to `claims`.
    func selected(_ ids: [CloudRecordID], subscription: CloudSubscription, claims: [String: CloudValue]) async throws -> Set<CloudRecordID>
    func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID>
    func missingAssets(_ hashes: [String]) async throws -> Set<String>
    func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws
    func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8]
    func share(_ zone: String, with user: String, access: CloudShareAccess?) async throws
    func shares() async throws -> [CloudShare]
    /// Keeps what the client's host says of itself (``GroupStoreCloud/CloudDatabase/report(_:)``).
    func report(_ report: CloudHostReport) async throws
    /// Of `zones`, those the role may read (the push subscription keeps those only).
    func readable(_ zones: [CloudZone]) async throws -> Set<CloudZone>
}

extension GatewayBackend {
    public var noticeExecutor: (any TaskExecutor)? { nil }

    public func acting(as identity: GatewayIdentity, origin: String?, deadline: ContinuousClock.Instant) -> any GatewayRoleDatabase {
        acting(as: identity, origin: origin)
    }

    public func report(_ reports: [(identity: GatewayIdentity, report: CloudHostReport)]) async throws {
        for (identity, report) in reports { try await acting(as: identity, origin: nil).report(report) }
    }
}

extension GatewayRoleDatabase {
    /// A backend that does not evaluate subscriptions answers an empty one
    /// as a plain fetch, and refuses any other.
    public func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?, subscription: CloudSubscription,
        claims: [String: CloudValue]
    ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool) {
        guard subscription.isEmpty else { throw Self.unsupportedSubscriptions }
        return try await fetchChanges(in: zone, since: token, limit: limit, keeping: mark)
    }

    /// A backend that does not evaluate subscriptions refuses to say which records one holds.
    public func selected(_ ids: [CloudRecordID], subscription: CloudSubscription, claims: [String: CloudValue]) async throws -> Set<
        CloudRecordID
    > {
        throw Self.unsupportedSubscriptions
    }

    private static var unsupportedSubscriptions: CloudSyncError {
        CloudSyncError(.invalidConfiguration, "this gateway's backend does not evaluate subscriptions: sync the tables whole")
    }

    /// The history checked first, then the changes made, then the history
    /// read again: for a backend that cannot do it in one transaction.
    public func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<
        [CloudModifyResult]
    > {
        try await .apart(keeping: mark, writes: true, history: history(keeping:)) { try await modify(changes) }
    }

    /// The page read, then the history checked, and the page dropped if the
    /// mark is not kept (``CloudHistoryChecked/apart(keeping:writes:history:_:)``):
    /// for a backend that cannot do both in one transaction.
    public func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool) {
        var heldBack = false
        let answer = try await CloudHistoryChecked.apart(keeping: mark, writes: false, history: history(keeping:)) {
            let (batch, held) = try await fetchChanges(in: zone, since: token, limit: limit)
            heldBack = held
            return batch
        }
        return (answer, heldBack)
    }
}

/// A change the backend was told of: who wrote it, and which zones it
/// touched, by their tags (``GatewayBackend/tag(of:)``).
public struct GatewayNotice: Sendable, Hashable {
    /// The writer's origin (empty: not a GroupStore client, or unknown).
    public var origin: String
    /// `z:<tag>` for each zone changed, `m:<tag>` for each user whose shares
    /// changed; `nil`: any zone may have changed.
    public var tags: Set<String>?

    public init(origin: String, tags: Set<String>?) {
        self.origin = origin
        self.tags = tags
    }
}
