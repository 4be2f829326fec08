import Foundation
import GRDB
import GroupStore
import GroupStoreCloud

extension EmbeddedRemote {
    /// Which of `hashes` the remote has no asset for.
    public func missingAssets(_ hashes: [String]) async throws -> Set<String> {
        try await perform("look up assets") { connection in
            let wanted = Array(Set(hashes))
            guard !wanted.isEmpty else { return [] }
            let present = try await connection.read { db in
                var present: Set<String> = []
                var start = 0
                while start < wanted.count {
                    let chunk = Array(wanted[start..<min(start + 500, wanted.count)])
                    start += chunk.count
                    let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                    for row in try Row.fetchAll(
                        db, sql: "SELECT hash FROM assets WHERE hash IN (\(marks))", arguments: StatementArguments(chunk))
                    {
                        present.insert(try row.decode(String.self, atIndex: 0))
                    }
                }
                return present
            }
            return Set(wanted).subtracting(present)
        }
    }

    /// Stores an asset's bytes; does nothing when the remote has it already.
    /// - Throws: ``CloudSyncError/Code/badRemote`` when `bytes` do not match
    ///   `asset` (their SHA-256 or their size): the remote keeps only what
    ///   it can verify.
    public func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws {
        try await perform("upload an asset") { connection in
            guard bytes.count == asset.size else {
                throw CloudSyncError(
                    .badRemote, "the remote \(path) refused asset \(asset.hash): \(bytes.count) bytes given, \(asset.size) announced")
            }
            let actual = SHA256.hex(bytes)
            guard actual == asset.hash else {
                throw CloudSyncError(
                    .badRemote, "the remote \(path) refused asset \(asset.hash): the bytes given hash to \(actual)")
            }
            try await connection.write { db in
                try db.execute(
                    sql: "INSERT INTO assets (hash, size, bytes) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING",
                    arguments: [asset.hash, asset.size, Data(bytes)])
            }
        }
    }

    /// An asset's bytes (checked against its hash).
    /// - Throws: ``CloudSyncError/Code/badRemote`` when the remote has no
    ///   such asset, or its bytes are damaged.
    public func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] {
        try await perform("download an asset") { connection in
            let data = try await connection.read { db in
                try Row.fetchOne(db, sql: "SELECT bytes FROM assets WHERE hash = ?", arguments: [asset.hash])
                    .map { try $0.decode(Data.self, atIndex: 0) }
            }
            guard let data else {
                throw CloudSyncError(.badRemote, "the remote \(path) has no asset \(asset.hash)")
            }
            let bytes = [UInt8](data)
            guard SHA256.hex(bytes) == asset.hash else {
                throw CloudSyncError(.badRemote, "the remote \(path) holds damaged bytes for asset \(asset.hash)")
            }
            return bytes
        }
    }
}
