import Foundation
import GRDB

/// The history tables inside the shared database, and the statements that
/// open, seal and close transactions in them.
///
/// ```
/// groupstore_transaction  one row per committed transaction
///   seq           INTEGER PRIMARY KEY AUTOINCREMENT  total order across the group, never reused
///   author        TEXT      member name; NULL for writers outside the library
///   committed_at  REAL      Unix seconds
///   open          INTEGER   1 while changes may still be added to it
///   first_change  INTEGER   id of its first row in groupstore_change
/// groupstore_change       one row per changed row, in commit order
///   id INTEGER PRIMARY KEY, entity TEXT, op INTEGER (1 insert, 2 update, 3 delete),
///   key (integer rowid, or JSON text), columns TEXT (JSON array, updates only)
/// groupstore_meta         key/value: format version, pruned_through
/// ```
///
/// Triggers on tracked tables add rows here inside the writer's own
/// transaction (pure SQL, so the `sqlite3` shell is captured too). SQLite
/// gives a trigger no transaction id, so the first change of a transaction
/// opens a transaction row and later changes join the open row. The library
/// seals the row before its commit; a foreign writer's row stays open until a
/// merger or the next library write closes it. A transaction's changes are
/// the ids from its `first_change` up to the next transaction's.
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
                CREATE TABLE \(transactionTable) (
                  seq INTEGER PRIMARY KEY AUTOINCREMENT,
                  author TEXT,
                  committed_at REAL NOT NULL,
                  open INTEGER NOT NULL DEFAULT 1,
                  first_change INTEGER NOT NULL
                );
                CREATE INDEX \(transactionTable)_open ON \(transactionTable)(open) WHERE open = 1;
                CREATE TABLE \(changeTable) (
                  id INTEGER PRIMARY KEY,
                  entity TEXT NOT NULL,
                  op INTEGER NOT NULL,
                  key NOT NULL,
                  columns TEXT
                );
                CREATE TABLE \(metaTable) (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
                INSERT INTO \(metaTable)(key, value) VALUES ('format', \(formatVersion)), ('pruned_through', 0);
                """)
        return true
    }

    /// The statement a trigger runs before recording a change: opens a
    /// transaction row unless one is open.
    static func openTransactionSQL(when condition: String? = nil) -> String {
        """
        INSERT INTO \(transactionTable)(committed_at, first_change) \
        SELECT (julianday('now') - 2440587.5) * 86400.0, coalesce((SELECT max(id) FROM \(changeTable)), 0) + 1 \
        WHERE NOT EXISTS (SELECT 1 FROM \(transactionTable) WHERE open = 1)\(condition.map { " AND \($0)" } ?? "");
        """
    }

    /// Closes a transaction left open by a writer outside the library.
    /// Must run with the write lock held, so the open row is committed and complete.
    /// - Returns: whether a transaction was closed.
    @discardableResult
    static func closeOpenTransaction(_ db: Database) throws -> Bool {
        try db.cachedStatement(sql: "UPDATE \(transactionTable) SET open = 0 WHERE open = 1").execute()
        return db.changesCount > 0
    }

    /// Seals the transaction the current write opened, naming its author.
    /// - Returns: its sequence number, or `nil` if the write changed no tracked table.
    static func seal(_ db: Database, author: MemberName, committedAt: Date) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(
                sql: "UPDATE \(transactionTable) SET open = 0, author = ?, committed_at = ? WHERE open = 1 RETURNING seq"),
            arguments: [author.rawValue, committedAt.timeIntervalSince1970])
    }

    /// The last sequence number a new member can consider delivered: the
    /// newest closed transaction (an open one is not complete yet).
    static func lastClosedSeq(_ db: Database) throws -> Int64 {
        if let open = try Int64.fetchOne(db, sql: "SELECT min(seq) FROM \(transactionTable) WHERE open = 1") {
            return open - 1
        }
        return try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = '\(transactionTable)'") ?? 0
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
