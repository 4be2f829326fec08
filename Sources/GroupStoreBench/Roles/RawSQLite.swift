import GRDBSQLite

/// A bare SQLite connection through the C API, for the benchmark's floors:
/// the same statements the library runs, with no Swift layer above SQLite
/// (no GRDB, no history code).
final class RawSQLite {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    let path: String

    init(path: String) throws {
        self.path = path
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw BenchFailure("cannot open \(path)")
        }
        sqlite3_busy_timeout(handle, 10_000)
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close(handle)
    }

    /// Runs `sql` (any number of statements) once, not cached.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "?"
            sqlite3_free(message)
            throw BenchFailure("\(path): \(text) in \(sql)")
        }
    }

    /// Steps the cached statement for `sql` with `arguments` bound (integers
    /// and reals), calling `row` for each row; returns the rows' count.
    @discardableResult
    func run(_ sql: String, _ arguments: [Double] = [], row: (OpaquePointer) -> Void = { _ in }) throws -> Int {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in arguments.enumerated() {
            if value.rounded() == value && abs(value) < 9e15 {
                sqlite3_bind_int64(statement, Int32(index + 1), Int64(value))
            } else {
                sqlite3_bind_double(statement, Int32(index + 1), value)
            }
        }
        var rows = 0
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW:
                rows += 1
                row(statement)
            case SQLITE_DONE:
                return rows
            case let code:
                throw BenchFailure("\(path): \(String(cString: sqlite3_errmsg(handle))) (\(code)) in \(sql)")
            }
        }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw BenchFailure("\(path): \(String(cString: sqlite3_errmsg(handle))) in \(sql)")
        }
        statements[sql] = statement
        return statement
    }
}
