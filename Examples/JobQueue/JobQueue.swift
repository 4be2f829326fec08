import GRDB

/// The schema shared by the job producer and worker examples.
///
/// A job goes `queued` → `claimed` (by one worker) → `done`. Claiming and
/// completing are separate transactions, so a worker can work outside a
/// transaction; on graceful shutdown it finishes the job it holds, and on start
/// it takes back jobs it held when it crashed.
public enum JobQueue {
    public static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("job") { db in
            try db.execute(
                sql: """
                    CREATE TABLE job(
                      id INTEGER PRIMARY KEY,
                      payload TEXT NOT NULL,
                      state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'claimed', 'done')),
                      worker TEXT,
                      result TEXT,
                      enqueued_at REAL NOT NULL,
                      done_at REAL)
                    """)
            try db.execute(sql: "CREATE INDEX job_state ON job(state, id)")
        }
        return migrator
    }
}
