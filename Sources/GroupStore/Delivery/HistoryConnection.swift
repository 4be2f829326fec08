import GRDB

/// The merger's own connection to the shared database, for its reads of
/// the history: a WAL reader beside the pool's writer, so a merge never
/// waits behind this member's writes (nor they behind it), and it never
/// takes SQLite's write lock.
///
/// It is one connection used from the delivery's queue only, so a read is
/// a cached `BEGIN DEFERRED`, the history's few statements and `COMMIT` on
/// the calling thread: the pool's readers would add a checkout from the
/// reader pool and GRDB's schema check to every wake-up (about 35 µs each,
/// measured), for nothing a merge uses.
final class HistoryConnection: Sendable {
    private let queue: DatabaseQueue

    init(path: String, configuration: Configuration) throws {
        var configuration = configuration
        configuration.label = (configuration.label ?? "GroupStore") + ".history"
        queue = try DatabaseQueue(path: path, configuration: configuration)
    }

    /// `body` in one read transaction (one snapshot).
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try queue.inDatabase { db in
            try db.cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
            do {
                let value = try body(db)
                try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
                return value
            } catch {
                try? db.rollback()
                throw error
            }
        }
    }

    func close() {
        try? queue.close()
    }
}
