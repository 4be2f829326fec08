import GRDB
import GRDBSQLite

/// The history's state as this process's last library write left it, kept
/// with the data version of the database file just after that commit, so the
/// next write skips reading it while nothing else has changed the database.
///
/// The data version is SQLite's `SQLITE_FCNTL_DATA_VERSION` of the writer
/// connection: it moves with each commit of that connection, and when a
/// transaction starts after another connection (of any process) committed. A
/// write's transaction is `IMMEDIATE`, so when it starts the version is
/// current: equal to the one kept means no commit of any kind came between,
/// and the state kept is the state on disk. It is kept only when the commit
/// that made it was the connection's last change (no observer of the
/// commit wrote after the write's seal), and a value it never had again
/// (the version only grows) can never match it by chance.
struct KnownHistoryState: Sendable {
    private var kept: (dataVersion: UInt32, state: HistorySchema.State)?

    /// The state kept, if the database is still at `version`.
    func state(at version: UInt32?) -> HistorySchema.State? {
        guard let version, let kept, version == kept.dataVersion else { return nil }
        return kept.state
    }

    /// Keeps `state` as the state at `version`.
    mutating func keep(_ state: HistorySchema.State, at version: UInt32) {
        kept = (version, state)
    }

    /// Forgets what is kept (the next write reads the state).
    mutating func forget() {
        kept = nil
    }

    /// The data version of `db`'s main database file, or `nil` if SQLite
    /// cannot tell.
    static func dataVersion(_ db: Database) -> UInt32? {
        var version: UInt32 = 0
        guard sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK else { return nil }
        return version
    }

    /// Rows changed by `db`'s connection since it opened, triggers' included.
    static func totalChanges(_ db: Database) -> Int64 {
        sqlite3_total_changes64(db.sqliteConnection)
    }
}
