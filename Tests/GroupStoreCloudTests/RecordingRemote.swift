import Foundation
import GroupStoreCloud
import Synchronization

/// Passes every call to a real remote and records what was sent, so tests
/// can tell what the bridge uploaded (not a stand-in: the remote underneath
/// does the work).
final class RecordingRemote: ForwardingRemote {
    let base: any CloudDatabase
    private let sent = Mutex<[CloudRecordChange]>([])
    private let assets = Mutex<[CloudAsset]>([])
    private let reported = Mutex<[CloudHostReport]>([])

    init(_ base: any CloudDatabase) { self.base = base }

    var changes: [CloudRecordChange] { sent.withLock { $0 } }
    var uploadedAssets: [CloudAsset] { assets.withLock { $0 } }
    /// The fleet-view reports the bridge sent, in order.
    var reports: [CloudHostReport] { reported.withLock { $0 } }

    func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
        let results = try await base.modify(changes)
        sent.withLock { $0 += changes }
        return results
    }
    func report(_ report: CloudHostReport) async throws {
        try await base.report(report)
        reported.withLock { $0.append(report) }
    }
    func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws {
        try await base.uploadAsset(asset, bytes: bytes)
        assets.withLock { $0.append(asset) }
    }
}

extension CloudRecordChange {
    /// The fields a save carried (empty for a delete).
    var sentFields: CloudFields {
        if case .save(_, _, let fields, _, _) = self { return fields }
        return [:]
    }
}
