import Foundation
import GroupStoreCloud
import Synchronization

/// Passes every call to a real remote and records what was sent, so tests
/// can tell what the bridge uploaded (not a stand-in: the remote underneath
/// does the work).
final class RecordingRemote: CloudDatabase {
    let base: any CloudDatabase
    private let sent = Mutex<[CloudRecordChange]>([])
    private let assets = Mutex<[CloudAsset]>([])

    init(_ base: any CloudDatabase) { self.base = base }

    var changes: [CloudRecordChange] { sent.withLock { $0 } }
    var uploadedAssets: [CloudAsset] { assets.withLock { $0 } }

    var displayName: String { base.displayName }
    func account() async throws -> String { try await base.account() }
    func prepare(_ types: [CloudRecordType]) async throws { try await base.prepare(types) }
    func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
        let results = try await base.modify(changes)
        sent.withLock { $0 += changes }
        return results
    }
    func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
        try await base.fetchChanges(in: zone, since: token, limit: limit)
    }
    func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await base.missingAssets(hashes) }
    func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws {
        try await base.uploadAsset(asset, bytes: bytes)
        assets.withLock { $0.append(asset) }
    }
    func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] { try await base.downloadAsset(asset) }
    func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> { try await base.forgotten(records) }
    func pushHints() -> AsyncStream<Void> { base.pushHints() }
}

extension CloudRecordChange {
    /// The fields a save carried (empty for a delete).
    var sentFields: CloudFields {
        if case .save(_, _, let fields, _) = self { return fields }
        return [:]
    }
}
