import Foundation
import GroupStoreCloud

/// A test remote that passes every call to a real one (`base`) and changes
/// or records only what it declares itself: the others forward by default.
protocol ForwardingRemote: CloudDatabase {
    var base: any CloudDatabase { get }
}

extension ForwardingRemote {
    var displayName: String { base.displayName }
    func account() async throws -> String { try await base.account() }
    func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory { try await base.history(keeping: mark) }
    func prepare(_ types: [CloudRecordType]) async throws { try await base.prepare(types) }
    func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] { try await base.modify(changes) }
    func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
        try await base.fetchChanges(in: zone, since: token, limit: limit)
    }
    func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> { try await base.forgotten(records) }
    func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await base.missingAssets(hashes) }
    func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws { try await base.uploadAsset(asset, bytes: bytes) }
    func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] { try await base.downloadAsset(asset) }
    func share(_ zone: String, with user: String, access: CloudShareAccess?) async throws {
        try await base.share(zone, with: user, access: access)
    }
    func shares() async throws -> [CloudShare] { try await base.shares() }
    func pushHints() -> AsyncStream<Void> { base.pushHints() }
    /// The base remote runs apart (the test runs it, if it needs running).
    func run() async throws {}
}
