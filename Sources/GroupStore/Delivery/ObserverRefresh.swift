import GRDB
import Logging

/// Tells this process's GRDB observers (`ValueObservation`s and transaction
/// observers on the store's pool) about the tables other processes changed.
///
/// GRDB notices only the changes made through its own writer connection, so
/// after a merge the tables other members changed are announced on that
/// connection with `notifyChanges(in:)`, inside a deferred transaction that
/// reads and writes nothing: it never takes SQLite's write lock (GRDB tells
/// its observers when it commits). That is the merge's one entry into the
/// writer connection's queue, and it comes after the saves are handed over:
/// GRDB's notification costs about 10 µs a table (it looks the table's
/// columns up), which subscribers need not wait for. Tables that fail are
/// kept, and announced with the next merge that delivers something.
///
/// A value owned by ``Delivery`` and touched on its queue only.
struct ObserverRefresh {
    private var tables = Set<String>()
    /// After a resync: every table.
    private var everything = false
    /// `PRAGMA schema_version` when the writer connection's schema cache was
    /// last cleared.
    private var cachedSchemaVersion: Int64

    /// Starts from a writer connection whose cache matches `schemaVersion`.
    init(schemaVersion: Int64) {
        cachedSchemaVersion = schemaVersion
    }

    var isPending: Bool { everything || !tables.isEmpty }

    mutating func note<S: Sequence>(_ changed: S) where S.Element == String {
        tables.formUnion(changed)
    }

    mutating func noteEverything() {
        everything = true
    }

    /// Whether the writer connection's schema cache may be stale: another
    /// process changed the schema since it was last cleared.
    func cacheIsStale(schemaVersion: Int64) -> Bool {
        schemaVersion != cachedSchemaVersion
    }

    /// Clears GRDB's schema cache of the writer connection. GRDB clears a
    /// connection's cache after that connection's own schema changes only
    /// (readers check at each read): after another process's (a table a
    /// peer created), the writer connection would not know the new table, so
    /// its observers would not be notified of it, and an observation started
    /// on it would fail. Run before the saves that announce it are handed
    /// over.
    mutating func clearWriterCache(pool: DatabasePool, schemaVersion: Int64) {
        pool.writeWithoutTransaction { db in db.clearSchemaCache() }
        cachedSchemaVersion = schemaVersion
    }

    /// Clears the writer connection's schema cache now; returns the schema
    /// version it matches (when the store opens).
    static func clearedWriterCache(pool: DatabasePool) throws -> Int64 {
        try pool.writeWithoutTransaction { db in
            db.clearSchemaCache()
            return Int64(try HistorySchema.schemaVersion(db))
        }
    }

    /// Notifies the observers of every table noted.
    mutating func notify(pool: DatabasePool, logger: Logger) {
        guard isPending else { return }
        let tables = self.tables
        let everything = self.everything
        do {
            try pool.writeWithoutTransaction { db in
                try db.cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
                do {
                    var names = tables
                    if everything {
                        // Table by table, not GRDB's whole-database region:
                        // that one fails as a whole on a table this process
                        // cannot open (a virtual table of a module it lacks).
                        db.clearSchemaCache()
                        names.formUnion(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
                    }
                    for table in names {
                        do {
                            try db.notifyChanges(in: Table(table))
                        } catch {
                            // Dropped since, or a table this process cannot
                            // open: nothing here observes it.
                        }
                    }
                    try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
                } catch {
                    try? db.rollback()
                    throw error
                }
            }
            self.tables.removeAll()
            self.everything = false
        } catch {
            logger.info("cannot notify this process's GRDB observers; will retry", metadata: ["error": "\(error)"])
        }
    }
}
