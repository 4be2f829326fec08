import Foundation
import GRDB
import XCTest

@testable import GroupStore

/// The history's schema is made by ``SchemaMigration``s recorded in
/// `groupstore_history_migrations`: a shipped one is never edited, a
/// history made before they were recorded is adopted, and the app's own
/// migrator never sees them.
final class HistoryMigrationTests: StoreTestCase {
    /// Identifier and SHA-256 of the SQL of every shipped history migration, in order.
    static let shipped: [(String, String)] = [
        ("groupstore.history.v3", "a6b43452a187345e1764914241b505f63216eab3323799243771010d0e5d86d2")
    ]

    func testNoShippedHistoryMigrationWasEdited() {
        let migrations = HistorySchema.migrations
        XCTAssertGreaterThanOrEqual(migrations.count, Self.shipped.count, "a shipped migration was removed")
        for ((identifier, checksum), migration) in zip(Self.shipped, migrations) {
            XCTAssertEqual(migration.identifier, identifier, "the shipped migrations were reordered or renamed")
            XCTAssertEqual(
                migration.checksum, checksum,
                "migration \(identifier) was edited after it shipped (its SQL now hashes to \(migration.checksum)): "
                    + "restore it and add a new migration instead")
        }
        XCTAssertEqual(
            migrations.count, Self.shipped.count,
            "new migrations \(migrations.dropFirst(Self.shipped.count).map { "\($0.identifier) \($0.checksum)" }): record them here once they ship"
        )
    }

    func testANewHistory_recordsItsMigrations_apartFromTheAppsMigrator() async throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("t") { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let store = try open("member") { $0.migrator = migrator }
        let appMigrator = migrator
        let (history, app, superseded) = try await store.pool.read { db in
            (
                try String.fetchAll(db, sql: "SELECT identifier FROM groupstore_history_migrations ORDER BY identifier"),
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier"),
                try appMigrator.hasBeenSuperseded(db)
            )
        }
        XCTAssertEqual(history, HistorySchema.migrations.map(\.identifier))
        XCTAssertEqual(app, ["t"])
        XCTAssertFalse(superseded)
    }

    func testAFormat3HistoryMadeBeforeMigrationsWereRecorded_isAdopted_andKeepsItsEpochAndTransactions() async throws {
        let writer = try open("writer")
        let seq = try await writeSeq(writer, "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        let epoch = try await writer.pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM groupstore_meta WHERE key = 'epoch'")
        }
        await writer.close()
        // As the build before recorded migrations left it.
        try await DatabaseQueue(path: group + "/store.sqlite").write { db in
            try db.execute(sql: "DROP TABLE groupstore_history_migrations")
        }
        let reopened = try open("writer")
        let (recorded, epochAfter, last) = try await reopened.pool.read { db in
            (
                try String.fetchAll(db, sql: "SELECT identifier FROM groupstore_history_migrations"),
                try String.fetchOne(db, sql: "SELECT value FROM groupstore_meta WHERE key = 'epoch'"),
                try Int64.fetchOne(db, sql: "SELECT max(seq) FROM groupstore_transaction")
            )
        }
        XCTAssertEqual(recorded, ["groupstore.history.v3"])
        XCTAssertEqual(epochAfter, epoch, "the adopted history kept its identity")
        XCTAssertGreaterThanOrEqual(last ?? 0, seq)
    }
}
