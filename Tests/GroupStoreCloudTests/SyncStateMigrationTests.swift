import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import XCTest

/// The sync state's migrations are recorded apart from the app's own
/// `grdb_migrations` (the app's migrator sees only its own), and a state
/// made by a build that kept no migrations is adopted in place.
final class SyncStateMigrationTests: CloudTestCase {
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)"

    private func identifiers(_ store: GroupStore, in table: String = "groupstore_cloud_migrations") throws -> [String] {
        try store.pool.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM \(table) ORDER BY identifier") }
    }

    func testTheAppsMigrator_andTheBridgesMigrations_eachRunTheirOwn_andTheAppSeesOnlyItsOwn() async throws {
        let a = try open("a", schema: Self.schema)
        try await a.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'one')") }
        try await sync("a", tables: ["note"])
        XCTAssertEqual(try identifiers(a), ["groupstore.cloud.v1", "groupstore.cloud.v2", "groupstore.cloud.v3", "groupstore.cloud.v4"])
        XCTAssertEqual(try identifiers(a, in: "grdb_migrations"), ["schema"])
        await a.close()

        // The app ships a new migration: its migrator runs it beside the bridge's rows.
        var configuration = GroupConfiguration(directory: group("a"), member: try MemberName("app"))
        configuration.pruneInterval = nil
        var migrator = DatabaseMigrator()
        migrator.registerMigration("schema") { db in try db.execute(sql: Self.schema) }
        migrator.registerMigration("body") { db in try db.execute(sql: "ALTER TABLE note ADD COLUMN body TEXT") }
        configuration.migrator = migrator
        let reopened = try GroupStore(configuration)
        defer { reopened.closeBlocking() }
        XCTAssertEqual(try identifiers(reopened, in: "grdb_migrations"), ["body", "schema"])
        let appMigrator = migrator
        let superseded = try await reopened.pool.read { db in try appMigrator.hasBeenSuperseded(db) }
        XCTAssertFalse(superseded, "the app's migrator saw the bridge's migrations")
        try await reopened.write { db in try db.execute(sql: "UPDATE note SET body = 'added' WHERE id = 'n1'") }
        let summary = try await sync("a", tables: ["note"])
        XCTAssertEqual(summary.uploaded, 1, "the row of the migrated table goes up")
        let b = try open("b", schema: Self.schema + "; ALTER TABLE note ADD COLUMN body TEXT")
        try await sync("b", tables: ["note"])
        XCTAssertEqual(try dump(b, "note"), ["t:n1|t:one|t:added"])
    }

    /// A group and an embedded remote made by the build before migrations
    /// were kept (`Fixtures/`): the state is adopted in place, the remote
    /// too, and syncing goes on — the edit made before the upgrade goes up,
    /// the other group's record comes down, and a new group gets them all.
    func testAStateAndARemoteMadeBeforeMigrations_keepSyncing() async throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        try FileManager.default.createDirectory(atPath: group("g"), withIntermediateDirectories: true)
        for (dump, path) in [("before-migrations-store.sql", group("g") + "/store.sqlite"), ("before-migrations-remote.sql", remotePath)] {
            let sql = try String(contentsOf: fixtures.appendingPathComponent(dump), encoding: .utf8)
            let queue = try DatabaseQueue(path: path)
            try await queue.writeWithoutTransaction { db in try db.execute(sql: sql) }
            try queue.close()
        }
        let remote = try embeddedRemote()
        let g = try open("g")
        let summary = try await sync("g", tables: ["note"], remote: remote)
        XCTAssertEqual(summary.uploaded, 1, "the edit made before the upgrade goes up")
        XCTAssertEqual(summary.fetched, 1, "the other group's record comes down")
        XCTAssertEqual(try dump(g, "note"), ["t:n1|t:edited before the upgrade", "t:n2|t:two", "t:n3|t:from the other group"])
        XCTAssertEqual(try identifiers(g), ["groupstore.cloud.v1", "groupstore.cloud.v2", "groupstore.cloud.v3", "groupstore.cloud.v4"])
        let format = try await g.pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM groupstore_cloud_meta WHERE key = 'format'")
        }
        XCTAssertEqual(format, "4")
        let remoteMigrations = try await DatabaseQueue(path: remotePath).read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        }
        XCTAssertEqual(remoteMigrations, ["groupstore.remote.v1", "groupstore.remote.v2", "groupstore.remote.v3", "groupstore.remote.v4"])

        let fresh = try open("fresh", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)")
        try await sync("fresh", tables: ["note"], remote: remote)
        XCTAssertEqual(try dump(fresh, "note"), try dump(g, "note"))
    }
}
