import FolderWatching
import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import Logging
import ServiceLifecycle
import Synchronization

/// The embedded remote: a SQLite file on this host, shared by several groups
/// (and processes), that behaves like a sync server — server-assigned change
/// tags, per-zone change tokens, tombstones, private and public scopes — so
/// the bridge can be run and tested with no server.
///
/// ```swift
/// let remote = try EmbeddedRemote(path: "/srv/cloud/cloud.sqlite", user: "alice")
/// try await remote.prepare([CloudRecordType(name: "notes", scope: .private, columns: columns)])
/// let results = try await remote.modify([.save(id: id, baseTag: nil, fields: ["title": .text("hi")], editedAt: Date())])
/// let batch = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 200)
/// ```
///
/// The rules are enforced by the remote whatever the client claims: a
/// private zone is read and written by its owner only; a public record is
/// read by anyone and written by its creator only; a save or delete with a
/// stale base tag is a conflict carrying the server's record; a delete
/// leaves a tombstone, so a stale edit of a deleted record is a conflict too.
///
/// The remote is a `Service`: its ``run()`` owns the push-hint watch (one
/// inotify watch of the file's directory) and ends the hint streams when it
/// returns; run it in the `ServiceGroup` before the ``CloudSync`` that uses
/// it. Its other calls work whether it runs or not.
///
/// The file is a GRDB `DatabasePool` in WAL mode with a 10-second busy
/// timeout; any number of processes may use it at once. It is checked before
/// every call: a file deleted, replaced by another remote (its tokens then
/// expire) or overwritten with garbage gives ``CloudSyncError/Code/badRemote``
/// or ``CloudSyncError/Code/tokenExpired``, never a crash.
public final class EmbeddedRemote: CloudDatabase, Sendable {
    /// The remote's file, as given.
    public let path: String
    /// The user this connection acts as.
    public let user: String
    /// The faults this remote injects (none by default).
    public let faults: EmbeddedRemoteFaults
    /// The largest estimated size of one `modify`, in bytes.
    public static let maxBatchBytes = 2_000_000

    let logger: Logger
    /// `path` made absolute, for the file checks and the push-hint watch.
    let absolutePath: String
    private let connection: Mutex<EmbeddedRemoteConnection>
    /// The streams of ``pushHints()``, fed while ``run()`` runs.
    private let hints = PushHints()

    /// Opens the remote at `path`, creating it when the file is missing (its
    /// directory must exist).
    ///
    /// - Parameters:
    ///   - path: the remote's SQLite file (by convention `cloud.sqlite`).
    ///   - user: the user this connection acts as: the owner of its private
    ///     zone and of the records it creates.
    ///   - faults: faults to inject, for tests.
    ///   - logger: receives what the remote does (at `info` and below).
    /// - Throws: ``CloudSyncError/Code/badRemote`` with a one-line message
    ///   naming `path`: no such directory, a directory, not a SQLite
    ///   database, a SQLite database that is not a GroupStore remote (or of a
    ///   newer format), not readable and writable;
    ///   ``CloudSyncError/Code/invalidConfiguration`` for a `user` that is
    ///   empty or not made of A-Z a-z 0-9 . _ - @ +.
    public init(
        path: String,
        user: String,
        faults: EmbeddedRemoteFaults = .init(),
        logger: Logger = Logger(label: "GroupStoreCloud")
    ) throws {
        // A user names a private zone (`private/<user>`): letters, digits and . _ - @ + only.
        guard CloudZone.isUserName(user) else {
            throw CloudSyncError(
                .invalidConfiguration,
                "the user of the remote \(path) must be 1 to 128 of A-Z a-z 0-9 . _ - @ +, not \(String(reflecting: user))")
        }
        self.path = path
        self.user = user
        self.faults = faults
        self.logger = logger
        absolutePath = EmbeddedRemoteFile.absolute(path)
        let (opened, note) = try EmbeddedRemoteConnection.open(path: absolutePath, display: path)
        connection = Mutex(opened)
        if let note {
            logger.info("embedded remote \(note)", metadata: ["remote": "\(path)", "epoch": "\(opened.epoch)"])
        }
        logger.debug("embedded remote opened", metadata: ["remote": "\(path)", "user": "\(user)"])
    }

    /// Creates the remote at `path`, or upgrades its schema to this
    /// version's format; does nothing to a remote that is up to date.
    /// Used by `groupstore cloud setup`.
    ///
    /// - Returns: one line saying what the remote is now, for example
    ///   `"remote /srv/cloud.sqlite: created (format 3, epoch …): 0 record types, 0 records, log at 0"`.
    /// - Throws: ``CloudSyncError/Code/badRemote`` as ``init(path:user:faults:logger:)`` does.
    public static func setup(path: String) throws -> String {
        let absolute = EmbeddedRemoteFile.absolute(path)
        let (opened, note) = try EmbeddedRemoteConnection.open(path: absolute, display: path)
        do {
            return try opened.pool.read { db in
                let types = try Row.fetchOne(db, sql: "SELECT count(*) FROM types")?.decode(Int.self, atIndex: 0) ?? 0
                let counts = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(deleted), 0) FROM records")
                let records = try counts?.decode(Int.self, atIndex: 0) ?? 0
                let tombstones = try counts?.decode(Int.self, atIndex: 1) ?? 0
                let assets = try Row.fetchOne(db, sql: "SELECT count(*) FROM assets")?.decode(Int.self, atIndex: 0) ?? 0
                let head = try EmbeddedRemoteSchema.head(db)
                let state = note ?? "up to date"
                return "remote \(path): \(state) (format \(EmbeddedRemoteSchema.format), epoch \(opened.epoch)): "
                    + "\(types) record types, \(records - tombstones) records, \(tombstones) tombstones, \(assets) assets, log at \(head)"
            }
        } catch {
            throw EmbeddedRemoteConnection.remoteError(error, display: path, doing: "read")
        }
    }

    /// The path, as given.
    public var displayName: String { path }

    /// The user given at creation.
    public func account() async throws -> String {
        try await perform("read the account") { _ in user }
    }

    /// The latest change, whether `mark` is part of the file's history (a
    /// file restored from an older copy lacks the changes made since, or logs
    /// others at their positions), and this host's clock.
    public func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory {
        let display = path
        return try await perform("read the history") { connection in
            try await connection.read { db in
                let epoch = try Self.epoch(db, display: display)
                let (head, keeps) = try EmbeddedRemoteSchema.history(db, epoch: epoch, keeping: mark)
                return CloudRemoteHistory(head: head, keepsMark: keeps, now: Date())
            }
        }
    }

    /// The epoch as the file has it now (a file restored in place may be another remote's).
    static func epoch(_ db: Database, display: String) throws -> String {
        guard let epoch = try EmbeddedRemoteSchema.meta(db)["epoch"], !epoch.isEmpty else {
            throw CloudSyncError(.badRemote, "the remote \(display) has no epoch in its meta table")
        }
        return epoch
    }

    /// Registers record types. A type already known keeps its scope (and
    /// gains any new columns).
    /// - Throws: ``CloudSyncError/Code/scopeChanged`` when a type was first
    ///   prepared with another scope (then nothing is registered).
    public func prepare(_ types: [CloudRecordType]) async throws {
        let display = path
        let notes = try await perform("prepare record types") { connection in
            try await connection.write { db in
                try Self.prepare(db, types: types, display: display)
            }
        }
        for note in notes {
            logger.info("\(note)", metadata: ["remote": "\(path)"])
        }
    }

    /// Push hints: yields (coalesced) whenever a write to the remote is
    /// committed, by any process, or the file is replaced, while ``run()``
    /// runs; finished when it returns.
    public func pushHints() -> AsyncStream<Void> {
        hints.stream()
    }

    /// Watches the remote's file for push hints until cancelled or told to
    /// shut down gracefully, then finishes every hint stream.
    public func run() async throws {
        let hints = self.hints
        let watcher = RemotePushWatcher.start(for: absolutePath, display: path, logger: logger) { hints.yield() }
        try? await gracefulShutdown()
        watcher?.cancel()
        hints.finish()
    }

    /// Prunes the change log to its last `n` entries, and the tombstones of
    /// the deletes pruned with it; tokens from before the pruned entries then
    /// expire (``CloudSyncError/Code/tokenExpired``), and their holders fetch
    /// their zones again in full.
    /// - Throws: ``CloudSyncError/Code/badRemote`` or
    ///   ``CloudSyncError/Code/transient`` when the file cannot be written.
    public func compactLog(keepingLast n: Int) async throws {
        let display = path
        do {
            let connection = try await currentConnection()
            let result = try await connection.write { db -> (horizon: Int64, tombstones: Int)? in
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT seq FROM change_log ORDER BY seq DESC LIMIT 1 OFFSET ?", arguments: [max(0, n)])
                else { return nil }
                let cutoff = try row.decode(Int64.self, atIndex: 0)
                let old = try EmbeddedRemoteSchema.meta(db)["horizon"].flatMap { Int64($0) } ?? 0
                let horizon = max(old, cutoff)
                try db.execute(sql: "DELETE FROM change_log WHERE seq <= ?", arguments: [horizon])
                try db.execute(sql: "DELETE FROM records WHERE deleted = 1 AND seq <= ?", arguments: [horizon])
                let tombstones = db.changesCount
                try db.execute(
                    sql: "INSERT INTO meta (key, value) VALUES ('horizon', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    arguments: [String(horizon)])
                return (horizon, tombstones)
            }
            if let result {
                logger.info(
                    "embedded remote log compacted: tokens before \(result.horizon) expire, \(result.tombstones) tombstones pruned",
                    metadata: ["remote": "\(display)"])
            }
        } catch {
            throw EmbeddedRemoteConnection.remoteError(error, display: display, doing: "compact the log")
        }
    }

    // MARK: - Calls

    /// Runs one remote call: the injected fault due, if any; then `body`
    /// with the connection to the file as it is now; every error mapped to
    /// a ``CloudSyncError`` naming the remote.
    func perform<T: Sendable>(
        _ operation: String,
        _ body: (EmbeddedRemoteConnection) async throws -> T
    ) async throws -> T {
        try faults.beforeCall(operation, remote: path)
        do {
            return try await body(try await currentConnection())
        } catch {
            throw EmbeddedRemoteConnection.remoteError(error, display: path, doing: operation)
        }
    }

    /// The connection to the file at the path now: the one open, or a new
    /// one if the file was replaced (a remote recreated or restored).
    private func currentConnection() async throws -> EmbeddedRemoteConnection {
        let (current, file) = try check()
        if current.file.isSameFile(as: file) { return current }
        let (absolute, display) = (absolutePath, path)
        let (opened, _) = try await offThePool {
            try EmbeddedRemoteConnection.open(path: absolute, display: display)
        }
        return adopt(opened, replacing: current)
    }

    /// The open connection, and the file at the path now (which must still
    /// look like a SQLite database).
    private func check() throws -> (EmbeddedRemoteConnection, EmbeddedRemoteFile) {
        guard let file = try EmbeddedRemoteFile.probe(absolutePath, display: path) else {
            throw CloudSyncError(.badRemote, "the remote \(path) is gone (deleted or moved away)")
        }
        return (connection.withLock { $0 }, file)
    }

    private func adopt(_ opened: EmbeddedRemoteConnection, replacing old: EmbeddedRemoteConnection) -> EmbeddedRemoteConnection {
        connection.withLock { $0 = opened }
        if opened.epoch != old.epoch {
            logger.info(
                "embedded remote file was replaced by another remote: its tokens expire",
                metadata: ["remote": "\(path)", "epoch": "\(opened.epoch)"])
        } else {
            logger.info("embedded remote file was replaced: reopened", metadata: ["remote": "\(path)"])
        }
        return opened
    }

    // MARK: - Record types

    private static func prepare(_ db: Database, types: [CloudRecordType], display: String) throws -> [String] {
        var notes: [String] = []
        for var type in types {
            // By name ignoring case, as SQLite names tables: one record type per table, spelled as first prepared.
            let row = try Row.fetchOne(
                db, sql: "SELECT scope, columns, name FROM types WHERE name = ? COLLATE NOCASE ORDER BY name = ? DESC LIMIT 1",
                arguments: [type.name, type.name])
            if let row { type.name = try row.decode(String.self, atIndex: 2) }
            guard let row else {
                try db.execute(
                    sql: "INSERT INTO types (name, scope, columns) VALUES (?, ?, ?)",
                    arguments: [type.name, type.scope.rawValue, try encodeColumns(type.columns)])
                notes.append("record type \(type.name) registered (\(type.scope.rawValue), \(type.columns.count) columns)")
                continue
            }
            guard let scope = CloudScope(rawValue: try row.decode(String.self, atIndex: 0)) else {
                throw CloudSyncError(.badRemote, "the remote \(display) holds an unreadable scope for the record type \(type.name)")
            }
            guard scope == type.scope else {
                throw CloudSyncError(
                    .scopeChanged,
                    "table \(type.name) was first synced as \(scope.rawValue); it cannot be synced as \(type.scope.rawValue)")
            }
            let known: [CloudColumn]
            do {
                known = try JSONDecoder().decode([CloudColumn].self, from: Data(try row.decode(String.self, atIndex: 1).utf8))
            } catch {
                throw CloudSyncError(
                    .badRemote, "the remote \(display) holds unreadable columns for the record type \(type.name)", underlying: error)
            }
            let knownNames = Set(known.map(\.name))
            let added = type.columns.filter { !knownNames.contains($0.name) }
            guard !added.isEmpty else { continue }
            try db.execute(
                sql: "UPDATE types SET columns = ? WHERE name = ?",
                arguments: [try encodeColumns(known + added), type.name])
            notes.append("record type \(type.name) gains columns \(added.map(\.name).joined(separator: ", "))")
        }
        return notes
    }

    private static func encodeColumns(_ columns: [CloudColumn]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(columns), as: UTF8.self)
    }

    /// Every registered record type, by its name in lower case: its name as
    /// first prepared, and its scope.
    static func recordTypes(_ db: Database) throws -> [String: (name: String, scope: CloudScope)] {
        var types: [String: (name: String, scope: CloudScope)] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT name, scope FROM types")) {
            guard let scope = CloudScope(rawValue: try row.decode(String.self, atIndex: 1)) else { continue }
            let name = try row.decode(String.self, atIndex: 0)
            types[name.lowercased()] = (name, scope)
        }
        return types
    }
}

/// The faults an ``EmbeddedRemote`` injects (``RemoteFaults``, shared with
/// ``MemoryRemote``).
public typealias EmbeddedRemoteFaults = RemoteFaults
