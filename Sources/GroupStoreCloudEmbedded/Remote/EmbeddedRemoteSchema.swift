import Foundation
import GRDB
import GroupStore
import GroupStoreCloud

/// The tables of an embedded remote (format 4), how a file is recognised as
/// one, and how it is created or upgraded (``migrations``).
///
/// ```sql
/// -- kind, format, epoch, horizon, created:
/// meta(key PRIMARY KEY, value)
/// -- the record types:
/// types(name PRIMARY KEY, scope, columns JSON)
/// records(zone, type, name, owner, tag, fields JSON, edited_at REAL,
///         edited_by, deleted, seq, PRIMARY KEY (zone, type, name))
/// change_log(seq INTEGER PRIMARY KEY AUTOINCREMENT, zone, type, name,
///            entry,  -- format 3: what identifies the change (random hex)
///            previous)  -- format 4: the record's fields before it, if live
/// assets(hash PRIMARY KEY, size, bytes)
/// -- format 2: who each shared zone is shared with:
/// shares(owner, zone, member, can_write, PRIMARY KEY (owner, zone, member))
/// ```
///
/// `records.seq` is the change-log position of the record's latest change
/// (its tag is derived from it), so the changes of a zone since a position
/// are the records whose `seq` is after it; deletes keep a tombstone
/// (`deleted = 1`) until ``EmbeddedRemote/compactLog(keepingLast:)`` prunes
/// it and raises the `horizon`, the oldest position still served.
enum EmbeddedRemoteSchema {
    /// `meta.kind` of every embedded remote.
    static let kind = "groupstore-cloud-remote"
    /// The format this code writes, and the newest it reads.
    static let format = 4

    /// Where a file stands.
    enum Status: Equatable {
        /// A database with no tables: a remote can be created in it.
        case empty
        /// A remote of this format or an older one.
        case remote(format: Int)
    }

    /// Reads what `db` is. Throws ``CloudSyncError/Code/badRemote`` for a
    /// database that is not a remote, or a remote of a newer format.
    static func status(_ db: Database, display: String) throws -> Status {
        // `grdb_migrations` alone is a remote being created: the migrator
        // makes it before its first migration's transaction.
        let tables = try Row.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'grdb_migrations'"
        )
        .compactMap { try? $0.decode(String.self, atIndex: 0) }
        if tables.isEmpty { return .empty }
        guard tables.contains("meta") else {
            throw CloudSyncError(.badRemote, "the remote \(display) is a SQLite database but not a GroupStore remote (no meta table)")
        }
        let meta = try self.meta(db)
        guard meta["kind"] == kind else {
            throw CloudSyncError(
                .badRemote, "the remote \(display) is a SQLite database but not a GroupStore remote (its meta table is not a remote's)")
        }
        guard let text = meta["format"], let version = Int(text), version >= 1 else {
            throw CloudSyncError(.badRemote, "the remote \(display) has an unreadable format version")
        }
        guard version <= format else {
            throw CloudSyncError(
                .badRemote, "the remote \(display) has format \(version); this GroupStore reads up to format \(format): upgrade GroupStore")
        }
        guard let epoch = meta["epoch"], !epoch.isEmpty else {
            throw CloudSyncError(.badRemote, "the remote \(display) has no epoch in its meta table")
        }
        return .remote(format: version)
    }

    /// The `meta` table as a dictionary (rows that are not text are skipped).
    static func meta(_ db: Database) throws -> [String: String] {
        var meta: [String: String] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT key, value FROM meta")) {
            guard let key = try? row.decode(String.self, atIndex: 0),
                let value = try? row.decode(String.self, atIndex: 1)
            else { continue }
            meta[key] = value
        }
        return meta
    }

    /// The remote's migrations, run through GRDB's `DatabaseMigrator`
    /// (``migrate(_:display:)``). A shipped one is never edited
    /// (`MigrationChecksumTests`).
    static let migrations = [
        SchemaMigration(
            "groupstore.remote.v1",
            sql: """
                CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE types (name TEXT PRIMARY KEY NOT NULL, scope TEXT NOT NULL, columns TEXT NOT NULL);
                CREATE TABLE records (
                    zone TEXT NOT NULL, type TEXT NOT NULL, name TEXT NOT NULL, owner TEXT NOT NULL, tag TEXT NOT NULL,
                    fields TEXT NOT NULL, edited_at REAL NOT NULL, edited_by TEXT NOT NULL, deleted INTEGER NOT NULL DEFAULT 0,
                    seq INTEGER NOT NULL, PRIMARY KEY (zone, type, name)) WITHOUT ROWID;
                CREATE INDEX records_by_zone_seq ON records (zone, seq);
                CREATE TABLE change_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, zone TEXT NOT NULL, type TEXT NOT NULL, name TEXT NOT NULL);
                CREATE TABLE assets (hash TEXT PRIMARY KEY NOT NULL, size INTEGER NOT NULL, bytes BLOB NOT NULL);
                INSERT INTO meta (key, value) VALUES
                    ('kind', 'groupstore-cloud-remote'), ('format', '1'), ('epoch', lower(hex(randomblob(16)))),
                    ('horizon', '0'), ('created', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
                """),
        // Who each shared zone is shared with.
        SchemaMigration(
            "groupstore.remote.v2",
            sql: """
                CREATE TABLE shares (
                    owner TEXT NOT NULL, zone TEXT NOT NULL, member TEXT NOT NULL, can_write INTEGER NOT NULL,
                    PRIMARY KEY (owner, zone, member));
                UPDATE meta SET value = '2' WHERE key = 'format';
                """),
        // What identifies each change (random): a position logged again after a restore is another change.
        SchemaMigration(
            "groupstore.remote.v3",
            sql: """
                ALTER TABLE change_log ADD COLUMN entry TEXT;
                UPDATE meta SET value = '3' WHERE key = 'format';
                """),
        // Subscriptions: what each record held before each change (a filter's subset then), found by record.
        SchemaMigration(
            "groupstore.remote.v4",
            sql: """
                ALTER TABLE change_log ADD COLUMN previous TEXT;
                CREATE INDEX change_log_by_record ON change_log (zone, type, name, seq);
                UPDATE meta SET value = '4' WHERE key = 'format';
                """),
    ]

    /// Creates the remote in an empty database, or runs the migrations an
    /// older one lacks; a remote made before migrations were kept is
    /// adopted first (the migrations of its format recorded as applied).
    /// Several processes may open one new file at once: a migration that
    /// lost the race to another process is not an error.
    /// - Returns: what was done: `"created"`, `"upgraded from format N"` or `nil`.
    static func migrate(_ pool: DatabasePool, display: String) throws -> String? {
        let before = try pool.read { db -> (Status, Bool) in
            let status = try self.status(db, display: display)
            return (status, try SchemaMigration.applied(migrations, in: db).count == migrations.count)
        }
        if case .remote = before.0, before.1 { return nil }
        var migrator = DatabaseMigrator()
        SchemaMigration.register(migrations, in: &migrator)
        for attempt in 1...3 {
            do {
                try pool.write { db in
                    if case .remote(let format) = try status(db, display: display), try SchemaMigration.applied(migrations, in: db).isEmpty
                    {
                        try SchemaMigration.adopt(migrations.prefix(format).map(\.identifier), in: db)
                    }
                }
                try migrator.migrate(pool)
                break
            } catch {
                // Another process created or upgraded it meanwhile: look again.
                if attempt == 3, !(try pool.read { try migrator.hasCompletedMigrations($0) }) { throw error }
            }
        }
        switch before.0 {
        case .empty: return "created"
        case .remote(let format) where format < self.format: return "upgraded from format \(format)"
        case .remote: return nil
        }
    }

    /// The GRDB configuration of a remote's pool: WAL (a pool's default), and
    /// a 10-second busy timeout since several processes share the file.
    static func configuration(readonly: Bool = false) -> Configuration {
        var configuration = Configuration()
        configuration.label = "EmbeddedRemote"
        configuration.busyMode = .timeout(10)
        configuration.readonly = readonly
        return configuration
    }

    /// The mark of the latest change, and whether `mark` is part of this
    /// history (see ``CloudHistoryMark``).
    static func history(_ db: Database, epoch: String, keeping mark: CloudHistoryMark?) throws -> (CloudHistoryMark, Bool) {
        let head = try self.head(db)
        let horizon = try meta(db)["horizon"].flatMap { Int64($0) } ?? 0
        let statement = try db.cachedStatement(sql: "SELECT coalesce(entry, '') FROM change_log WHERE seq = ?")
        let entry = { (seq: Int64) throws -> String? in try String.fetchOne(statement, arguments: [seq]) }
        let keeps = try mark.map { try FeedToken.keeps($0, epoch: epoch, head: head, horizon: horizon, entry: entry) } ?? true
        return (CloudHistoryMark(epoch: epoch, position: head, entry: try entry(head) ?? ""), keeps)
    }

    /// The position of the latest change (0 when none): kept by SQLite for
    /// the `AUTOINCREMENT` log even after the log rows are pruned.
    static func head(_ db: Database) throws -> Int64 {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT seq FROM sqlite_sequence WHERE name = 'change_log'"))
        guard let row else { return 0 }
        return try row.decode(Int64?.self, atIndex: 0) ?? 0
    }
}
