import GRDB

/// The table every benchmark writer fills.
enum BenchSchema {
    static let createSQL =
        "CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, author TEXT NOT NULL, n INTEGER NOT NULL, committed_at REAL NOT NULL)"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("items") { db in try db.execute(sql: createSQL) }
        return migrator
    }
}
