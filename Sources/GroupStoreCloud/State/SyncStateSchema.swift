import Foundation
import GRDB
import GroupStore

/// The sync state's tables in `store.sqlite` (see ``SyncState``), made and
/// upgraded by ``SchemaMigration``s recorded in `groupstore_cloud_migrations`
/// (not in the app's `grdb_migrations`, where the app's migrator would take
/// them for a newer app's).
///
/// A state made before migrations were kept (by builds that created the
/// tables with `CREATE TABLE IF NOT EXISTS`) is adopted: the migrations
/// whose tables and columns it has are recorded as applied, and the rest
/// run. A shipped migration is never edited (`MigrationChecksumTests`).
enum SyncStateSchema {
    static let migrations = [
        SchemaMigration(
            "groupstore.cloud.v1",
            sql: """
                CREATE TABLE groupstore_cloud_meta(key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID;
                CREATE TABLE groupstore_cloud_record(
                    entity TEXT NOT NULL, name TEXT NOT NULL, zone TEXT NOT NULL, tag TEXT NOT NULL,
                    ancestor TEXT NOT NULL, edited_at REAL NOT NULL, PRIMARY KEY (entity, name)) WITHOUT ROWID;
                CREATE TABLE groupstore_cloud_pending(
                    entity TEXT NOT NULL, name TEXT NOT NULL, edited_at REAL NOT NULL,
                    version INTEGER NOT NULL DEFAULT 1, rounds INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (entity, name)) WITHOUT ROWID;
                CREATE TABLE groupstore_cloud_parked(
                    entity TEXT NOT NULL, name TEXT NOT NULL, direction TEXT NOT NULL, reason TEXT NOT NULL,
                    record TEXT, parked_at REAL NOT NULL, PRIMARY KEY (entity, name, direction)) WITHOUT ROWID;
                CREATE TABLE groupstore_cloud_zone(zone TEXT PRIMARY KEY NOT NULL, token TEXT) WITHOUT ROWID;
                CREATE TABLE groupstore_cloud_diff(entity TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
                INSERT INTO groupstore_cloud_meta(key, value) VALUES ('format', 1), ('intake_seq', 0), ('conflicts', 0);
                """),
        // What an upload in flight sent, so a member taking over knows its own upload coming back.
        SchemaMigration(
            "groupstore.cloud.v2",
            sql: """
                ALTER TABLE groupstore_cloud_pending ADD COLUMN sent TEXT;
                ALTER TABLE groupstore_cloud_pending ADD COLUMN sent_before TEXT;
                UPDATE groupstore_cloud_meta SET value = 2 WHERE key = 'format';
                """),
        // After the attack on the bridge (issue 30): the last tag of each record deleted here (a remote
        // restored from an older copy may hold it again), columns of the remote's records a table here
        // lacks, and per record the rounds of changes an apply made it derive (a loop between bridges).
        SchemaMigration(
            "groupstore.cloud.v3",
            sql: """
                CREATE TABLE groupstore_cloud_tombstone(
                    entity TEXT NOT NULL, name TEXT NOT NULL, zone TEXT NOT NULL, tag TEXT NOT NULL, deleted_at REAL NOT NULL,
                    PRIMARY KEY (entity, name)) WITHOUT ROWID;
                CREATE TABLE groupstore_cloud_drift(
                    entity TEXT NOT NULL, "column" TEXT NOT NULL, seen_at REAL NOT NULL, PRIMARY KEY (entity, "column")) WITHOUT ROWID;
                ALTER TABLE groupstore_cloud_record ADD COLUMN derived INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE groupstore_cloud_record ADD COLUMN derived_columns TEXT;
                UPDATE groupstore_cloud_meta SET value = 3 WHERE key = 'format';
                """),
        // A remote replaced or restored under running bridges (issue 30): a version this group
        // acknowledged and brings back keeps its place in the record's history by its edit time (a
        // pending key's `restores`), and so does a record deleted here (the tombstone's `edited_at`).
        SchemaMigration(
            "groupstore.cloud.v4",
            sql: """
                ALTER TABLE groupstore_cloud_pending ADD COLUMN restores REAL;
                ALTER TABLE groupstore_cloud_tombstone ADD COLUMN edited_at REAL;
                UPDATE groupstore_cloud_meta SET value = 4 WHERE key = 'format';
                """),
    ]

    /// The format the last migration leaves in `groupstore_cloud_meta`.
    static let format = 4

    /// Where the applied migrations are recorded.
    static let migrationsTable = "groupstore_cloud_migrations"

    /// Creates or upgrades the tables, inside a `GroupStore.write` (a schema
    /// change made in a library write is its own, not a possible `VACUUM`
    /// that would reset the app's tables keyed by an implicit rowid).
    static func migrate(_ db: Database) throws {
        try adoptEarlierBuild(db)
        try SchemaMigration.migrate(migrations, in: db, recordingIn: migrationsTable)
    }

    /// Records as applied what a state made before migrations were kept
    /// already has: `v1` if its tables exist, `v2` if the pending keys have
    /// the `sent` columns.
    private static func adoptEarlierBuild(_ db: Database) throws {
        guard try db.tableExists(SyncState.meta), try !db.tableExists(migrationsTable) else { return }
        let columns = Set(try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [SyncState.pending]))
        var adopted = [migrations[0]]
        if columns.isSuperset(of: ["sent", "sent_before"]) {
            adopted.append(migrations[1])
            try db.execute(sql: "UPDATE \(SyncState.meta) SET value = 2 WHERE key = 'format'")
        }
        try SchemaMigration.adopt(adopted, in: db, recordingIn: migrationsTable)
    }
}
