import Dispatch
import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// An open embedded remote: the pool on its file, which file that is (to
/// notice it was replaced), and the remote's epoch.
struct EmbeddedRemoteConnection: Sendable {
    let pool: DatabasePool
    /// The file's absolute path.
    let path: String
    let file: EmbeddedRemoteFile
    /// The random id made when the remote was created: a new file has
    /// another one, so its tokens and tags never pass for the old file's.
    let epoch: String

    /// Opens the remote at `path` (absolute), creating it if the file is
    /// missing or an empty database, upgrading an older format.
    ///
    /// A file that already has tables is first inspected through a plain
    /// connection, so a database that is not a remote is left as it was (not
    /// even switched to WAL).
    /// - Returns: the connection, and what was done to the file (`"created"`,
    ///   `"upgraded from format 1"`) if anything.
    /// - Throws: ``CloudSyncError/Code/badRemote`` naming `display`.
    static func open(path: String, display: String) throws -> (EmbeddedRemoteConnection, String?) {
        do {
            try EmbeddedRemoteFile.checkDirectory(of: path, display: display)
            if let existing = try EmbeddedRemoteFile.probe(path, display: display) {
                guard EmbeddedRemoteFile.isReadWrite(path) else {
                    throw CloudSyncError(.badRemote, "cannot open the remote \(display) for reading and writing: permission denied")
                }
                if existing.size > 0 {
                    let queue = try DatabaseQueue(path: path, configuration: EmbeddedRemoteSchema.configuration())
                    defer { try? queue.close() }
                    _ = try queue.read { try EmbeddedRemoteSchema.status($0, display: display) }
                }
            }
            let pool = try openPool(path)
            let note = try EmbeddedRemoteSchema.migrate(pool, display: display)
            let epoch = try pool.read { try EmbeddedRemoteSchema.meta($0)["epoch"] }
            guard let epoch, !epoch.isEmpty else {
                throw CloudSyncError(.badRemote, "the remote \(display) has no epoch in its meta table")
            }
            guard let file = try EmbeddedRemoteFile.probe(path, display: display) else {
                throw CloudSyncError(.badRemote, "the remote \(display) disappeared while it was opened")
            }
            return (EmbeddedRemoteConnection(pool: pool, path: path, file: file, epoch: epoch), note)
        } catch {
            throw remoteError(error, display: display, doing: "open")
        }
    }

    /// The pool on the file at `path`. Opening a pool switches the file to
    /// WAL mode, and SQLite refuses that at once (`SQLITE_BUSY`, without
    /// its busy handler) while another process is switching the same new
    /// file: two bridges started together on a remote that does not exist
    /// yet. That is retried, with short growing pauses, for as long as the
    /// busy timeout (10 s).
    private static func openPool(_ path: String) throws -> DatabasePool {
        let deadline = Date(timeIntervalSinceNow: 10)
        var pause: UInt32 = 1_000
        while true {
            do {
                return try DatabasePool(path: path, configuration: EmbeddedRemoteSchema.configuration())
            } catch let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_BUSY && Date() < deadline {
                usleep(pause)
                pause = min(pause * 2, 50_000)
            }
        }
    }

    /// A write transaction on the remote; once it is committed (visible to
    /// every reader), the push watchers are told (``announceCommit()``).
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let pool = self.pool
        let result = try await blockingWork { try pool.write(body) }
        announceCommit()
        return result
    }

    /// A read transaction on the file: on the caller's own executor (the
    /// sync engine's queue: no thread hand-off), else off the concurrency
    /// pool (see ``blockingWork(_:)``).
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let pool = self.pool
        return try await blockingWork { try pool.read(body) }
    }

    /// Sets the times of the file's `-wal` (of the file itself, if there is
    /// no `-wal`) to now: the inotify event (`IN_ATTRIB`) that wakes the
    /// push watchers. It comes after the commit is visible, unlike the
    /// writes to the `-wal`, which come before (and before its sync).
    func announceCommit() {
        if utimensat(AT_FDCWD, path + "-wal", nil, 0) == 0 { return }
        _ = utimensat(AT_FDCWD, path, nil, 0)
    }

    /// The ``CloudSyncError`` for any error met while `doing` something with
    /// the remote `display`. Messages carry SQLite's message, never row data.
    static func remoteError(_ error: any Error, display: String, doing operation: String) -> any Error {
        switch error {
        case let error as CloudSyncError:
            return error
        case is CancellationError:
            return error
        case let error as DatabaseError:
            let detail = error.message ?? "\(error.resultCode)"
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return CloudSyncError(.transient, "the remote \(display) is busy (\(operation)): \(detail)", underlying: error)
            case .SQLITE_IOERR, .SQLITE_FULL, .SQLITE_NOMEM, .SQLITE_INTERRUPT, .SQLITE_PROTOCOL:
                return CloudSyncError(.transient, "the remote \(display) failed to \(operation): \(detail)", underlying: error)
            case .SQLITE_NOTADB, .SQLITE_CORRUPT:
                return CloudSyncError(
                    .badRemote, "the remote \(display) is not a SQLite database or is damaged (\(operation)): \(detail)", underlying: error)
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_AUTH:
                return CloudSyncError(.badRemote, "cannot use the remote \(display) (\(operation)): \(detail)", underlying: error)
            default:
                return CloudSyncError(.badRemote, "the remote \(display) failed to \(operation): \(detail)", underlying: error)
            }
        case is RowDecodingError, is DecodingError:
            return CloudSyncError(.badRemote, "the remote \(display) holds a damaged row (\(operation))", underlying: error)
        default:
            return CloudSyncError(.badRemote, "the remote \(display) failed to \(operation): \(error)", underlying: error)
        }
    }
}
