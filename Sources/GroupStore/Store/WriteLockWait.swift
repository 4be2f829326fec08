import GRDB
import Logging

/// Joining a group waits for SQLite's write lock as long as another process
/// holds it (a long migration, an operator's open `BEGIN IMMEDIATE`), instead
/// of failing after the busy timeout.
enum WriteLockWait {
    /// How often a wait is logged.
    static let logEvery = 6

    /// Runs `body` again each time it fails with `SQLITE_BUSY`.
    static func retrying<T>(logger: Logger, path: String, _ body: () throws -> T) throws -> T {
        var attempts = 0
        while true {
            do {
                return try body()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                attempts += 1
                if attempts % logEvery == 1 {
                    logger.info("waiting for another process to release the database's write lock", metadata: ["path": "\(path)"])
                }
            }
        }
    }
}
