import Foundation
import GRDB

extension GroupDirectory {
    /// Opens the shared database as a GRDB pool without moving its schema
    /// version. Call it under the setup lock (``withSetupLock(_:)``).
    ///
    /// GRDB makes sure a WAL file with content exists when a pool opens, by
    /// creating and dropping a table when the `-wal` file is missing or empty
    /// (the first process to open the database after all have closed it).
    /// That moves the schema version, and a move the library did not make in
    /// its own write is taken for a possible `VACUUM`, which resets every
    /// table keyed by an implicit rowid (``SchemaTracker/refresh(_:adopt:changedHere:)``).
    /// So a connection of its own first gives the WAL file content that
    /// changes nothing (`user_version` written back unchanged) and stays open
    /// until the pool is open, so no last connection's close deletes the file
    /// in between.
    func openPool(configuration: Configuration) throws -> DatabasePool {
        let keeper = try? DatabaseQueue(path: databasePath, configuration: configuration)
        defer { try? keeper?.close() }
        if let keeper {
            do {
                try keeper.writeWithoutTransaction { db in
                    guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal", walIsEmpty else { return }
                    try db.inTransaction(.immediate) {
                        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                        try db.execute(sql: "PRAGMA user_version = \(version)")
                        return .commit
                    }
                }
            } catch {
                // A database this process cannot write: GRDB's own set-up runs (or fails, naming the reason).
            }
        }
        return try DatabasePool(path: databasePath, configuration: configuration)
    }

    /// Whether the `-wal` file is missing or empty (what GRDB checks).
    private var walIsEmpty: Bool {
        guard let info = (try? root.status(of: Self.databaseFileName + "-wal")) ?? nil else { return true }
        return info.st_size == 0
    }
}
