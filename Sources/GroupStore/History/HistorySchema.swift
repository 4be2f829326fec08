import Foundation
import GRDB

/// The history tables inside the shared database, and the statements that
/// seal and close transactions in them.
///
/// ```
/// groupstore_change       one row per changed row, in commit order
///   id            INTEGER PRIMARY KEY
///   entity        TEXT      the table
///   op            INTEGER   1 insert, 2 update, 3 delete
///   key                     integer rowid, or JSON text
///   columns       TEXT      JSON array of changed columns (updates only)
/// groupstore_transaction  one row per committed transaction, written when it is sealed
///   seq           INTEGER PRIMARY KEY   total order across the group, never reused
///                 (the newest row is never pruned, so max(seq) + 1 never repeats)
///   author        TEXT      member name; NULL for writers outside the library
///   committed_at  REAL      Unix seconds
///   last_change   INTEGER   id of its last row in groupstore_change
/// groupstore_meta         key/value: format version, pruned_through
/// ```
///
/// Triggers on tracked tables add one `groupstore_change` row per changed row,
/// inside the writer's own transaction (pure SQL, so the `sqlite3` shell is
/// captured too). SQLite gives a trigger no transaction id, so transactions
/// are delimited afterwards: the library seals its write by inserting the
/// transaction row before committing, and a transaction's changes are the ids
/// after the previous transaction's `last_change` up to its own. Change rows
/// past the newest `last_change` belong to a writer outside the library; the
/// next library write, or a peer's merger, closes them into a transaction of
/// their own. So a trigger runs a single insert per row, and a one-row commit
/// touches two pages more than without the library.
enum HistorySchema {
    static let transactionTable = "groupstore_transaction"
    static let changeTable = "groupstore_change"
    static let metaTable = "groupstore_meta"
    /// Prefix of every table and trigger the library owns.
    static let reservedPrefix = "groupstore_"
    static let formatVersion = 1

    enum Operation: Int {
        case insert = 1, update = 2, delete = 3
    }

    /// Creates the history tables when missing.
    /// - Returns: whether they were created now (a brand-new history).
    @discardableResult
    static func create(_ db: Database) throws -> Bool {
        let exists = try db.tableExists(transactionTable)
        if exists { return false }
        try db.execute(
            sql: """
                CREATE TABLE \(changeTable) (
                  id INTEGER PRIMARY KEY,
                  entity TEXT NOT NULL,
                  op INTEGER NOT NULL,
                  key NOT NULL,
                  columns TEXT
                );
                CREATE TABLE \(transactionTable) (
                  seq INTEGER PRIMARY KEY,
                  author TEXT,
                  committed_at REAL NOT NULL,
                  last_change INTEGER NOT NULL
                );
                CREATE TABLE \(metaTable) (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
                INSERT INTO \(metaTable)(key, value) VALUES ('format', \(formatVersion)), ('pruned_through', 0);
                """)
        return true
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

    /// Where the history stands, read in one statement: the newest change,
    /// whether changes follow the newest transaction, and the schema version
    /// (so a write can tell whether it created or altered tables).
    static func state(_ db: Database) throws -> (newestChange: Int64, unsealedChanges: Bool, schemaVersion: Int) {
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT coalesce((SELECT max(id) FROM \(changeTable)), 0),
                           coalesce((SELECT last_change FROM \(transactionTable) ORDER BY seq DESC LIMIT 1), 0)
                    """))!
        let newest: Int64 = row[0]
        let version = try Int.fetchOne(db.cachedStatement(sql: "PRAGMA schema_version")) ?? 0
        return (newest, newest > row[1] as Int64, version)
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

    /// Whether `table` belongs to the library or to SQLite/GRDB and is never tracked.
    static func isInternal(_ table: String) -> Bool {
        let lower = table.lowercased()
        return lower.hasPrefix("sqlite_") || lower.hasPrefix(reservedPrefix) || lower.hasPrefix("grdb_")
    }
}
