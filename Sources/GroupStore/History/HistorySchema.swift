import Foundation
import GRDB

/// The history tables inside the shared database, and the statements that
/// seal and close transactions in them.
///
/// ```
/// groupstore_change       one row per changed row, in commit order
///   id            INTEGER PRIMARY KEY
///   entity        INTEGER   the table's id in groupstore_table
///   op            INTEGER   1 insert, 2 update, 3 delete, 4 table reset
///                           (key: the table's name), 5 pending and 0
///                           retired (both ignored by readers)
///   key                     the key value (type kept), or a CompositeKey text
///   rid           INTEGER   rowid, when the declared key holds a NULL
/// groupstore_transaction  one row per committed transaction, written when it is sealed
///   seq           INTEGER PRIMARY KEY   total order across the group, never reused
///                 (the newest row is never pruned, so max(seq) + 1 never repeats)
///   author        TEXT      member name; NULL for writers outside the library
///   committed_at  REAL      Unix seconds
///   last_change   INTEGER   id of its last row in groupstore_change
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
/// delimited afterwards: the library seals its write by inserting the
/// transaction row before committing, and a transaction's changes are the ids
/// after the previous transaction's `last_change` up to its own. Change rows
/// past the newest `last_change` belong to a writer outside the library; the
/// next library write, or a peer's merger, closes them into a transaction of
/// their own.
enum HistorySchema {
    static let transactionTable = "groupstore_transaction"
    static let changeTable = "groupstore_change"
    static let tableRegistry = "groupstore_table"
    static let metaTable = "groupstore_meta"
    /// Prefix of every table and trigger the library owns.
    static let reservedPrefix = "groupstore_"
    /// The tables and index the history creates (by name, as in `sqlite_master`).
    static let ownObjects = [changeTable, transactionTable, tableRegistry, metaTable, reservedPrefix + "change_pending"]
    static let formatVersion = 2

    enum Operation: Int {
        case insert = 1, update = 2, delete = 3, reset = 4
    }

    /// What a read of the history's shape found.
    enum Status: Equatable {
        case missing
        case current
        /// An older format, upgraded by ``create(_:)``.
        case outdated(Int)
    }

    static func status(_ db: Database) throws -> Status {
        guard try db.tableExists(metaTable) else { return .missing }
        let format = try Int.fetchOne(db, sql: "SELECT value FROM \(metaTable) WHERE key = 'format'") ?? 1
        return format == formatVersion ? .current : .outdated(format)
    }

    /// Creates the history tables when missing, or upgrades an older format.
    /// - Returns: whether the history is new (so existing tables are adopted
    ///   without listing their rows).
    @discardableResult
    static func create(_ db: Database) throws -> Bool {
        switch try status(db) {
        case .current: return false
        case .outdated(let format): try upgrade(db, from: format)
        case .missing: break
        }
        let epoch = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(changeTable) (
                  id INTEGER PRIMARY KEY,
                  entity INTEGER NOT NULL,
                  op INTEGER NOT NULL,
                  key,
                  rid INTEGER
                );
                CREATE INDEX IF NOT EXISTS \(reservedPrefix)change_pending ON \(changeTable)(entity) WHERE op = \(TriggerSQL.pendingOperation);
                CREATE TABLE IF NOT EXISTS \(transactionTable) (
                  seq INTEGER PRIMARY KEY,
                  author TEXT,
                  committed_at REAL NOT NULL,
                  last_change INTEGER NOT NULL
                );
                CREATE TABLE IF NOT EXISTS \(tableRegistry) (
                  id INTEGER PRIMARY KEY,
                  name TEXT NOT NULL,
                  key_columns INTEGER NOT NULL,
                  sql TEXT NOT NULL,
                  live INTEGER NOT NULL DEFAULT 1
                );
                CREATE TABLE IF NOT EXISTS \(metaTable) (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
                INSERT OR IGNORE INTO \(metaTable)(key, value) VALUES ('pruned_through', 0), ('schema_version', -1), ('registry_version', 0);
                INSERT OR REPLACE INTO \(metaTable)(key, value) VALUES ('format', \(formatVersion)), ('epoch', '\(epoch)');
                """)
        return true
    }

    /// Format 1 keyed changes by table name and JSON text. Its rows cannot be
    /// read as format 2: they are dropped, and the transactions with them but
    /// for the newest (the high-water mark of sequence numbers), which are
    /// counted as pruned, so a member behind gets a resync.
    private static func upgrade(_ db: Database, from format: Int) throws {
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

    /// Closes the changes a writer outside the library committed into a
    /// transaction of their own. Must run with the write lock held, so they are
    /// committed and complete.
    /// - Returns: whether there was anything to close.
    @discardableResult
    static func closeOpenTransaction(_ db: Database) throws -> Bool {
        try seal(db, author: nil, committedAt: Date()) != nil
    }

    /// Records the changes made since the last transaction as one transaction
    /// by `author` (`nil`: a writer outside the library).
    /// - Returns: its sequence number, or `nil` if no tracked row changed.
    @discardableResult
    static func seal(_ db: Database, author: MemberName?, committedAt: Date) throws -> Int64? {
        let state = try state(db)
        guard state.unsealedChanges else { return nil }
        return try insertTransaction(db, author: author, committedAt: committedAt, lastChange: state.newestChange)
    }

    /// Where the history stands: the newest change, the last change of the
    /// newest transaction (so whether changes follow it), the schema version
    /// (so a write can tell whether it created or altered tables) and the
    /// registry's version. Two statements, in the caller's transaction (one
    /// snapshot).
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
    /// it all again).
    static func state(_ db: Database, after before: State) throws -> State {
        var state = before
        state.schemaVersion = try schemaVersion(db)
        let row = try RawRows(db, sql: newestChangeSQL)
        _ = try row.next()
        state.newestChange = row.int64(0)
        return state
    }

    // `PRAGMA schema_version` runs apart: the table-valued `pragma_schema_version`
    // prepares a statement of its own each time it is read (1.3 µs here).
    private static let stateSQL = """
        SELECT coalesce((SELECT max(id) FROM \(changeTable)), 0),
               coalesce((SELECT last_change FROM \(transactionTable) ORDER BY seq DESC LIMIT 1), 0),
               (SELECT value FROM \(metaTable) WHERE key = 'schema_version'),
               (SELECT value FROM \(metaTable) WHERE key = 'registry_version')
        """

    private static let newestChangeSQL = "SELECT coalesce(max(id), 0) FROM \(changeTable)"

    struct State {
        var newestChange: Int64
        /// The last change of the newest transaction.
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

    static func insertTransaction(_ db: Database, author: MemberName?, committedAt: Date, lastChange: Int64) throws -> Int64 {
        try db.cachedStatement(sql: "INSERT INTO \(transactionTable)(author, committed_at, last_change) VALUES (?, ?, ?)")
            .execute(arguments: [author?.rawValue, committedAt.timeIntervalSince1970, lastChange])
        return db.lastInsertedRowID
    }

    /// The newest transaction's sequence number (0 for an empty history).
    static func lastSeq(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT max(seq) FROM \(transactionTable)") ?? 0
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
