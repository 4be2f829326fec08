import GRDB
import GRDBSQLite

/// The rows of one of the library's own small queries, stepped through
/// SQLite's C API on a statement GRDB prepared and caches.
///
/// The history is read on every wake-up of every member and on every write,
/// in queries of a few rows: there, GRDB's `Row` and `StatementArguments`
/// (boxed values, a row object per step) cost more than SQLite's own work.
/// Reads only: statements that write go through GRDB, which tells its
/// transaction observers about them.
///
/// Non-copyable, so the statement is reset (and its bindings cleared) exactly
/// once, when the value goes away, whether or not every row was read.
struct RawRows: ~Copyable {
    /// Keeps the statement alive (GRDB's cache holds it too).
    private let statement: Statement
    private let handle: OpaquePointer
    private let connection: OpaquePointer?

    /// The cached statement for `sql`, with `arguments` bound (the history's
    /// queries take sequence numbers, change ids and limits only).
    init(_ db: Database, sql: String, _ arguments: Int64...) throws {
        statement = try db.cachedStatement(sql: sql)
        handle = statement.sqliteStatement
        connection = db.sqliteConnection
        sqlite3_reset(handle)
        for (index, argument) in arguments.enumerated() {
            sqlite3_bind_int64(handle, Int32(index + 1), argument)
        }
    }

    deinit {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Steps to the next row; `false` once there is none.
    func next() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            let message = connection.map { String(cString: sqlite3_errmsg($0)) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// The column as an integer (`0` for `NULL`).
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func int64OrNil(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: bytes)
    }

    /// The column's bytes, whatever its type (text or blob).
    func bytes(_ column: Int32) -> [UInt8] {
        // The pointer first, then the size (as SQLite's documentation asks):
        // a text value is handed over as it is stored, never converted.
        guard let base = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(handle, column))))
    }

    /// The column's SQLite storage class (`SQLITE_INTEGER`, `SQLITE_TEXT`, …).
    func type(_ column: Int32) -> Int32 { sqlite3_column_type(handle, column) }
}
