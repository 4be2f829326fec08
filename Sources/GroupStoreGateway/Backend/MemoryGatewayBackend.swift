import GroupStoreCloud
import ServiceLifecycle

/// A gateway's backend in memory: a ``MemoryRemote/Server`` whose users are
/// the roles tokens name. For tests and examples: it keeps the remote
/// contract, but nothing outlives the process, and every change is a notice
/// for every zone (it has no tags).
public final class MemoryGatewayBackend: GatewayBackend {
    public let server: MemoryRemote.Server
    private let notified = Broadcast<GatewayNotice>()

    public init(server: MemoryRemote.Server = MemoryRemote.Server()) {
        self.server = server
    }

    public var displayName: String { "\(server.name) (in memory)" }

    /// Hands the server's changes on as notices until shutdown.
    public func run() async throws {
        let watcher = MemoryRemote(user: "gateway", server: server)
        let hints = watcher.pushHints()
        await cancelWhenGracefulShutdown {
            for await _ in hints { self.notified.yield(GatewayNotice(origin: "", tags: nil)) }
        }
        notified.finish()
    }

    public func acting(as identity: GatewayIdentity, origin: String?) -> any GatewayRoleDatabase {
        MemoryRoleDatabase(role: identity.user, server: server)
    }

    public func notices() -> AsyncStream<GatewayNotice> { notified.stream(bufferingNewest: 4096) }

    public func tag(of text: String) -> String? { nil }

    public func isReady() async -> Bool { true }

    public var isListening: Bool { true }

    public var poolUse: (leases: Int, size: Int) { (0, 0) }
}

/// A ``MemoryRemote`` acting as one role.
struct MemoryRoleDatabase: GatewayRoleDatabase {
    let role: String
    let server: MemoryRemote.Server

    /// The role's remote; a role that is no user name of the memory remote is refused.
    private func remote() throws -> MemoryRemote {
        guard CloudZone.isUserName(role) else {
            throw CloudSyncError(.unauthorized, "\(String(reflecting: role)) is not a user of \(server.name) (in memory)")
        }
        return MemoryRemote(user: role, server: server)
    }

    func account() async throws -> String { try await remote().account() }
    func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory { try await remote().history(keeping: mark) }
    func prepare(_ types: [CloudRecordType]) async throws { try await remote().prepare(types) }
    func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] { try await remote().modify(changes) }
    func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> (CloudChangeBatch, heldBack: Bool) {
        (try await remote().fetchChanges(in: zone, since: token, limit: limit), false)
    }
    func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<[CloudModifyResult]> {
        try await remote().modify(changes, keeping: mark)
    }
    func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool) {
        (try await remote().fetchChanges(in: zone, since: token, limit: limit, keeping: mark), false)
    }
    func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> { try await remote().forgotten(records) }
    func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await remote().missingAssets(hashes) }
    func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws { try await remote().uploadAsset(asset, bytes: bytes) }
    func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] { try await remote().downloadAsset(asset) }
    func share(_ zone: String, with user: String, access: CloudShareAccess?) async throws {
        try await remote().share(zone, with: user, access: access)
    }
    func shares() async throws -> [CloudShare] { try await remote().shares() }
    func report(_ report: CloudHostReport) async throws { try await remote().report(report) }

    func readable(_ zones: [CloudZone]) async throws -> Set<CloudZone> {
        let remote = try remote()
        var readable = Set<CloudZone>()
        for zone in zones {
            do {
                _ = try await remote.fetchChanges(in: zone, since: nil, limit: 1)
                readable.insert(zone)
            } catch let error as CloudSyncError where error.code == .permissionDenied || error.code == .invalidConfiguration {
                continue
            }
        }
        return readable
    }
}
