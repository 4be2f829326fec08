import Foundation
import GRDB

/// One shipped step of a schema the package owns: an identifier that never
/// changes and the SQL it runs, which never changes either once shipped (a
/// database that ran it will not run it again: a change goes in a new
/// migration; `MigrationChecksumTests` holds each shipped one's checksum).
///
/// Where they are recorded:
/// - The history's, in `store.sqlite`, in `groupstore_history_migrations`
///   (``migrate(_:in:recordingIn:)``).
/// - In a file the package owns (the embedded remote), through GRDB's
///   `DatabaseMigrator` (``register(_:in:)``), in `grdb_migrations`.
/// - The cloud bridge's sync state, in `store.sqlite`, in a table of their own
///   (``migrate(_:in:recordingIn:)``), never in `grdb_migrations`: the app's
///   migrator would count them as migrations of a newer app
///   (`hasBeenSuperseded`).
/// - On a PostgreSQL server, by its own runner on the same list type.
package struct SchemaMigration: Sendable, Hashable {
    package let identifier: String
    /// Statements separated by `;`, run in one transaction.
    package let sql: String

    package init(_ identifier: String, sql: String) {
        precondition(identifier.hasPrefix("groupstore."), "a GroupStore migration's identifier starts with groupstore.")
        self.identifier = identifier
        self.sql = sql
    }

    /// SHA-256 of the SQL, for the check that no shipped migration was edited.
    package var checksum: String { SHA256.hex(Array(sql.utf8)) }

    /// Registers `migrations` in order, each run with its foreign keys
    /// checked as it goes (`.immediate`): GRDB's default checks the whole
    /// database after the migration, which in `store.sqlite` would read
    /// every table of the app.
    package static func register(_ migrations: [SchemaMigration], in migrator: inout DatabaseMigrator) {
        for migration in migrations {
            migrator.registerMigration(migration.identifier, foreignKeyChecks: .immediate) { db in
                try db.execute(sql: migration.sql)
            }
        }
    }

    /// Runs the migrations of `migrations` that `table` does not record yet,
    /// in order, each recorded in the same transaction (the caller's, a
    /// write: nothing commits between two processes' checks).
    package static func migrate(_ migrations: [SchemaMigration], in db: Database, recordingIn table: String) throws {
        try db.execute(
            sql: "CREATE TABLE IF NOT EXISTS \(table) (identifier TEXT PRIMARY KEY NOT NULL, checksum TEXT NOT NULL) WITHOUT ROWID")
        let applied = try String.fetchSet(db, sql: "SELECT identifier FROM \(table)")
        for migration in migrations where !applied.contains(migration.identifier) {
            try db.execute(sql: migration.sql)
            try db.execute(
                sql: "INSERT INTO \(table)(identifier, checksum) VALUES (?, ?)", arguments: [migration.identifier, migration.checksum])
        }
    }

    /// Records `migrations` as applied in `table` without running them: a
    /// database made before migrations were kept already has what they create.
    package static func adopt(_ migrations: some Sequence<SchemaMigration>, in db: Database, recordingIn table: String) throws {
        try db.execute(
            sql: "CREATE TABLE IF NOT EXISTS \(table) (identifier TEXT PRIMARY KEY NOT NULL, checksum TEXT NOT NULL) WITHOUT ROWID")
        for migration in migrations {
            try db.execute(
                sql: "INSERT OR IGNORE INTO \(table)(identifier, checksum) VALUES (?, ?)",
                arguments: [migration.identifier, migration.checksum])
        }
    }

    /// Records `identifiers` as applied without running them: a database
    /// made before migrations were kept (by an older build) already has
    /// what they create.
    package static func adopt(_ identifiers: [String], in db: Database) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        for identifier in identifiers {
            try db.execute(sql: "INSERT OR IGNORE INTO grdb_migrations (identifier) VALUES (?)", arguments: [identifier])
        }
    }

    /// The identifiers of `migrations` this database has run.
    package static func applied(_ migrations: [SchemaMigration], in db: Database) throws -> Set<String> {
        guard try db.tableExists("grdb_migrations") else { return [] }
        return try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations").intersection(migrations.map(\.identifier))
    }
}
