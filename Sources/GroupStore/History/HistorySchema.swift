import Foundation
import GRDB
import GRDBSQLite

/// The history tables inside the shared database, and the statements that
/// mark and close transactions in them.
///
/// ```
/// groupstore_change       one row per changed row, and one marker row per
///                         committed transaction, in commit order
///   id            INTEGER PRIMARY KEY   a marker's id is its transaction's
///                 sequence number: total order across the group, never
///                 reused (the newest row is never pruned, so max(id) + 1
///                 never repeats)
///   entity        INTEGER   the table's id in groupstore_table (0: a marker)
///   op            INTEGER   1 insert, 2 update, 3 delete, 4 table reset
///                           (key: the table's name), 6 the marker that ends
///                           a transaction; 5 pending and 0 retired (both
///                           ignored by readers)
///   key                     the key value (type kept), or a CompositeKey
///                           text; a marker's: its author (NULL for a writer
///                           outside the library)
///   rid           INTEGER   rowid, when the declared key holds a NULL; a
///                           marker's: its commit time in Unix microseconds
/// groupstore_transaction  a view of the markers: seq, author, committed_at
///                         (Unix seconds), last_change (= seq)
/// groupstore_table        the tracked tables, by id (ids are never reused)
///   id, name, key_columns, sql, live
/// groupstore_meta         key/value: format, pruned_through, epoch,
///                         schema_version and schema_text (as last tracked),
///                         registry_version
/// ```
///
/// Triggers on tracked tables add `groupstore_change` rows inside the
/// writer's own transaction (pure SQL, so the `sqlite3` shell is captured
/// too). SQLite gives a trigger no transaction id, so transactions are
/// delimited by markers: the library ends its write with a marker row
/// before committing, and a transaction's changes are the rows after the
/// previous marker up to its own. Rows past the newest marker belong to a
/// writer outside the library; the next library write, or a peer's merger,
/// closes them into a transaction of their own with a marker.
///
/// The marker sits in the same B-tree as the changes it closes, mostly on
/// the same page: a tracked 1-row commit writes one page fewer than with a
/// table of transactions beside it (format 2), about a fifth of its time.
enum HistorySchema {
    static let transactionTable = "groupstore_transaction"
    static let changeTable = "groupstore_change"
    static let tableRegistry = "groupstore_table"
    static let metaTable = "groupstore_meta"
    /// Prefix of every table and trigger the library owns.
    static let reservedPrefix = "groupstore_"
    /// The tables, view and index the history creates (by name, as in `sqlite_master`).
    static let ownObjects = [
        changeTable, transactionTable, tableRegistry, metaTable, reservedPrefix + "change_pending", reservedPrefix + "history_migrations",
    ]
    /// The history's on-disk format (1: changes keyed by table name and
    /// JSON; 2: by table id, with a table of transactions; 3: transactions
    /// as marker rows among the changes).
    static let formatVersion = 3
    /// `op` of the row that ends a transaction.
    static let markerOperation = 6

    enum Operation: Int {
        case insert = 1, update = 2, delete = 3, reset = 4
    }

    /// What a read of the history's shape found.
    enum Status: Equatable {
        case missing
        case current
        /// An older format, upgraded by ``create(_:)``.
        case outdated(Int)
        /// A format of newer code than this: left alone.
        case newer(Int)
    }

    static func status(_ db: Database) throws -> Status {
        guard try db.tableExists(metaTable) else { return .missing }
        let format = try Int.fetchOne(db, sql: "SELECT value FROM \(metaTable) WHERE key = 'format'") ?? 1
        if format > formatVersion { return .newer(format) }
        return format == formatVersion ? .current : .outdated(format)
    }

    /// Where the history's migrations are recorded (see ``SchemaMigration``).
    static let migrationsTable = reservedPrefix + "history_migrations"

    /// The history's migrations, in order. Format 3 is the first recorded
    /// one; the formats before it are upgraded by code (``create(_:)``), and
    /// a format-3 history made before migrations were recorded is adopted.
    /// A shipped migration is never edited (`HistoryMigrationTests`).
    static let migrations = [
        SchemaMigration(
            "groupstore.history.v3",
            sql: """
                CREATE TABLE IF NOT EXISTS \(changeTable) (
                  id INTEGER PRIMARY KEY,
                  entity INTEGER NOT NULL,
                  op INTEGER NOT NULL,
                  key,
                  rid INTEGER
                );
                CREATE INDEX IF NOT EXISTS \(reservedPrefix)change_pending ON \(changeTable)(entity) WHERE op = \(TriggerSQL.pendingOperation);
                \(transactionViewSQL);
                CREATE TABLE IF NOT EXISTS \(tableRegistry) (
                  id INTEGER PRIMARY KEY,
                  name TEXT NOT NULL,
                  key_columns INTEGER NOT NULL,
                  sql TEXT NOT NULL,
                  live INTEGER NOT NULL DEFAULT 1
                );
                CREATE TABLE IF NOT EXISTS \(metaTable) (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
                INSERT OR IGNORE INTO \(metaTable)(key, value) VALUES ('pruned_through', 0), ('schema_version', -1), ('registry_version', 0);
                INSERT OR REPLACE INTO \(metaTable)(key, value) VALUES ('format', 3), ('epoch', lower(hex(randomblob(16))));
                """)
    ]

    /// Whether the history is of this code's format with every migration recorded.
    static func isUpToDate(_ db: Database) throws -> Bool {
        guard try status(db) == .current, try db.tableExists(migrationsTable) else { return false }
        let applied = try String.fetchSet(db, sql: "SELECT identifier FROM \(migrationsTable)")
        return migrations.allSatisfy { applied.contains($0.identifier) }
    }

    /// Creates the history tables when missing, or upgrades an older format.
    /// - Returns: whether the history is new (so existing tables are adopted
    ///   without listing their rows).
    /// - Throws: ``GroupStoreError/Code/database`` for a format of newer code.
    @discardableResult
    static func create(_ db: Database) throws -> Bool {
        var isNew = false
        switch try status(db) {
        case .newer(let format):
            throw newerFormat(format, path: sqlite3_db_filename(db.sqliteConnection, "main").map { String(cString: $0) } ?? "the database")
        case .current, .outdated(3...):
            // A format-3 history made before migrations were recorded.
            if try !db.tableExists(migrationsTable) {
                try SchemaMigration.adopt(migrations.prefix(1), in: db, recordingIn: migrationsTable)
            }
        case .outdated(2):
            try upgradeFromFormat2(db)
            try setMeta(db, "format", 3)
            try SchemaMigration.adopt(migrations.prefix(1), in: db, recordingIn: migrationsTable)
        case .outdated:
            // Format 1's triggers are dropped: the history starts anew (a new
            // epoch, every table adopted again); format 3's migration fills in
            // what is missing.
            try upgradeFromFormat1(db)
            try upgradeFromFormat2(db)
            isNew = true
        case .missing:
            isNew = true
        }
        try SchemaMigration.migrate(migrations, in: db, recordingIn: migrationsTable)
        return isNew
    }

    /// The error for a history of a format newer than this code's: left alone.
    static func newerFormat(_ format: Int, path: String) -> GroupStoreError {
        GroupStoreError(
            .database, "\(path): the GroupStore history is of format \(format), newer than this code's (\(formatVersion))", path: path)
    }

    /// The transactions as a view of the markers, for readers in other
    /// languages and the `sqlite3` shell (the library reads the markers).
    private static let transactionViewSQL = """
        CREATE VIEW IF NOT EXISTS \(transactionTable)(seq, author, committed_at, last_change) AS \
        SELECT id, key, rid / 1e6, id FROM \(changeTable) WHERE op = \(markerOperation)
        """

    /// Format 1 keyed changes by table name and JSON text. Its rows cannot be
    /// read as format 2: they are dropped, and the transactions with them but
    /// for the newest (the high-water mark of sequence numbers), which are
    /// counted as pruned, so a member behind gets a resync.
    private static func upgradeFromFormat1(_ db: Database) throws {
        for name in try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'groupstore\\_%' ESCAPE '\\'")
        {
            try db.execute(sql: "DROP TRIGGER \(quoteIdentifier(name))")
        }
        let newestChange = try Int64.fetchOne(db, sql: "SELECT max(id) FROM \(changeTable)") ?? 0
        try db.execute(sql: "DROP TABLE IF EXISTS \(changeTable)")
        try db.execute(
            sql: "CREATE TABLE \(changeTable) (id INTEGER PRIMARY KEY, entity INTEGER NOT NULL, op INTEGER NOT NULL, key, rid INTEGER)")
        // A placeholder keeps ids above every old transaction's last_change.
        try db.execute(sql: "INSERT INTO \(changeTable)(id, entity, op) VALUES (?, 0, 0)", arguments: [newestChange])
        try db.execute(
            sql: "DELETE FROM \(transactionTable) WHERE seq < (SELECT max(seq) FROM \(transactionTable))")
        try db.execute(
            sql: "UPDATE \(transactionTable) SET last_change = ? WHERE seq = (SELECT max(seq) FROM \(transactionTable))",
            arguments: [newestChange])
        try db.execute(
            sql: "UPDATE \(metaTable) SET value = (SELECT coalesce(max(seq), 0) FROM \(transactionTable)) WHERE key = 'pruned_through'")
    }

    /// Format 2 kept transactions in a table of their own. A marker cannot
    /// be put between two of its transactions' changes (their ids follow
    /// each other), so its transactions are dropped and counted as pruned: a
    /// member behind gets a resync, while one that had read everything goes
    /// on (its cursor stays of this history: the epoch is kept). One marker
    /// above every old sequence number and change id keeps both from going
    /// back; it closes the changes an outside writer committed after the
    /// newest transaction (kept: they are delivered as a transaction of
    /// their own). The triggers stay (they write the same change rows).
    private static func upgradeFromFormat2(_ db: Database) throws {
        let newestSeq = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM \(transactionTable)") ?? 0
        let sealedChange =
            try Int64.fetchOne(db, sql: "SELECT last_change FROM \(transactionTable) ORDER BY seq DESC LIMIT 1") ?? 0
        let newestChange = try Int64.fetchOne(db, sql: "SELECT max(id) FROM \(changeTable)") ?? 0
        try db.execute(sql: "DROP TABLE \(transactionTable)")
        try db.execute(sql: "DELETE FROM \(changeTable) WHERE id <= ?", arguments: [sealedChange])
        try db.execute(sql: transactionViewSQL)
        let marker = try insertMarker(db, id: max(newestSeq, newestChange) + 1, author: nil, committedAt: Date())
        // A reader at the newest sequence number reads the rows after it, so
        // kept rows must lie above it. They do: each transaction wrote one row
        // at least, so a sequence number is never above its last change. If a
        // hand-edited history broke that, everyone resyncs instead.
        let keptBelowCursor =
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM \(changeTable) WHERE id > ? AND id <= ?)", arguments: [sealedChange, newestSeq])
            ?? false
        try setPrunedThrough(db, keptBelowCursor ? marker : newestSeq)
    }

    /// Closes the changes a writer outside the library committed into a
    /// transaction of their own. Must run with the write lock held, so they are
    /// committed and complete.
    /// - Returns: whether there was anything to close.
    @discardableResult
    static func closeOpenTransaction(_ db: Database) throws -> Bool {
        let state = try state(db)
        guard state.unsealedChanges else { return false }
        try insertMarker(db, author: nil, committedAt: Date())
        return true
    }

    /// Where the history stands: the newest change, the newest marker (so
    /// whether changes follow it), the schema version (so a write can tell
    /// whether it created or altered tables) and the registry's version.
    /// Two statements, in the caller's transaction (one snapshot).
    static func state(_ db: Database) throws -> State {
        let version = try schemaVersion(db)
        let row = try RawRows(db, sql: stateSQL)
        _ = try row.next()
        return State(
            newestChange: row.int64(0), sealedChange: row.int64(1), schemaVersion: version,
            schemaIsTracked: !row.isNull(2) && row.int64(2) == Int64(version), registryVersion: row.int64(3))
    }

    /// The state after a write's own statements, from `before` (read in the
    /// same transaction, its `sealedChange` moved by the write if it closed
    /// an outside writer's changes first): only the newest change and the
    /// schema version can have moved, unless the schema changed (then read
    /// it all again). The newest change is not read: the seal finds it,
    /// reading the rows after `sealedChange`.
    static func state(_ db: Database, after before: State) throws -> State {
        var state = before
        state.schemaVersion = try schemaVersion(db)
        return state
    }

    // `PRAGMA schema_version` runs apart: the table-valued `pragma_schema_version`
    // prepares a statement of its own each time it is read (1.3 µs here).
    // The newest marker is found walking back from the newest row: the
    // newest row itself, unless a writer outside the library left changes.
    private static let stateSQL = """
        SELECT coalesce((SELECT max(id) FROM \(changeTable)), 0),
               (\(lastSeqSQL)),
               (SELECT value FROM \(metaTable) WHERE key = 'schema_version'),
               (SELECT value FROM \(metaTable) WHERE key = 'registry_version')
        """

    /// The newest marker's id: the newest transaction's sequence number.
    static let lastSeqSQL = "SELECT coalesce((SELECT id FROM \(changeTable) WHERE op = \(markerOperation) ORDER BY id DESC LIMIT 1), 0)"

    struct State {
        var newestChange: Int64
        /// The newest marker (the newest transaction's last row).
        var sealedChange: Int64
        var schemaVersion: Int
        /// The tracked tables are those of this schema version.
        var schemaIsTracked: Bool
        var registryVersion: Int64
        /// Changes follow the newest transaction (a writer outside the library).
        var unsealedChanges: Bool { newestChange > sealedChange }
    }

    /// `PRAGMA schema_version`, from a cached statement.
    static func schemaVersion(_ db: Database) throws -> Int {
        let row = try RawRows(db, sql: "PRAGMA schema_version")
        return try row.next() ? Int(row.int64(0)) : 0
    }

    /// Ends the changes since the newest marker as one transaction by
    /// `author` (`nil`: a writer outside the library), committed at
    /// `committedAt` (kept to the microsecond).
    /// - Parameter id: the marker's id, for an upgrade's high-water mark;
    ///   else the next one.
    /// - Returns: the transaction's sequence number (the marker's id).
    @discardableResult
    static func insertMarker(_ db: Database, id: Int64? = nil, author: MemberName?, committedAt: Date) throws -> Int64 {
        try db.cachedStatement(
            sql: "INSERT INTO \(changeTable)(id, entity, op, key, rid) VALUES (?, 0, \(markerOperation), ?, ?)"
        ).execute(arguments: [id, author?.rawValue, microseconds(committedAt)])
        return db.lastInsertedRowID
    }

    /// A commit time as a marker keeps it.
    static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1e6).rounded())
    }

    /// A commit time as read back from a marker.
    static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1e6)
    }

    /// The newest transaction's sequence number (0 for an empty history).
    static func lastSeq(_ db: Database) throws -> Int64 {
        let row = try RawRows(db, sql: lastSeqSQL)
        return try row.next() ? row.int64(0) : 0
    }

    /// The newest marker at or before `position` (0 if none is left).
    static func markerAtOrBefore(_ db: Database, _ position: Int64) throws -> Int64 {
        let row = try RawRows(db, sql: markerAtOrBeforeSQL, position)
        return try row.next() ? row.int64(0) : 0
    }

    private static let markerAtOrBeforeSQL = """
        SELECT coalesce((SELECT id FROM \(changeTable) WHERE id <= ? AND op = \(markerOperation) ORDER BY id DESC LIMIT 1), 0)
        """

    /// The commit time of transaction `seq`, if it is in the history.
    static func committedAt(_ db: Database, seq: Int64) throws -> Date? {
        let row = try RawRows(db, sql: "SELECT rid FROM \(changeTable) WHERE id = ? AND op = \(markerOperation)", seq)
        return try row.next() && !row.isNull(0) ? date(microseconds: row.int64(0)) : nil
    }

    /// Transactions up to this sequence number were pruned.
    static func prunedThrough(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT value FROM \(metaTable) WHERE key = 'pruned_through'")) ?? 0
    }

    static func setPrunedThrough(_ db: Database, _ seq: Int64) throws {
        try db.execute(
            sql: "UPDATE \(metaTable) SET value = max(value, ?) WHERE key = 'pruned_through'", arguments: [seq])
    }

    static func meta(_ db: Database, _ key: String) throws -> DatabaseValue {
        try DatabaseValue.fetchOne(db.cachedStatement(sql: "SELECT value FROM \(metaTable) WHERE key = ?"), arguments: [key])
            ?? .null
    }

    static func setMeta(_ db: Database, _ key: String, _ value: some DatabaseValueConvertible) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO \(metaTable)(key, value) VALUES (?, ?)", arguments: [key, value])
    }

    /// Whether `table` belongs to the library or to SQLite/GRDB and is never tracked.
    static func isInternal(_ table: String) -> Bool {
        let lower = table.lowercased()
        return lower.hasPrefix("sqlite_") || lower.hasPrefix(reservedPrefix) || lower.hasPrefix("grdb_")
    }
}
