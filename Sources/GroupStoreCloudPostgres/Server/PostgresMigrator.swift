#if Postgres
    import Foundation
    import GroupStore
    import GroupStoreCloud
    import Logging
    import PostgresNIO

    /// Runs the server schema's ordered migrations (``PostgresServerSchema/migrations``)
    /// that a server has not run, in the caller's transaction, and records each
    /// in `groupstore.migrations` with the checksum of its SQL.
    ///
    /// A server set up before migrations were kept has no such table: the first
    /// migration (format 3, every statement of it idempotent) runs on it as the
    /// setup of that build did, and is recorded.
    struct PostgresMigrator {
        let connection: PostgresConnection
        let logger: Logger

        /// Runs what is missing; returns the identifiers run.
        func migrate(_ migrations: [SchemaMigration]) async throws -> [String] {
            try await connection.query("CREATE SCHEMA IF NOT EXISTS groupstore", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS groupstore.migrations (
                  identifier text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            let rows = try await PostgresRemote.cells(connection.query("SELECT identifier FROM groupstore.migrations", logger: logger))
            let applied = Set(rows.compactMap { $0.first ?? nil })
            var ran: [String] = []
            for migration in migrations where !applied.contains(migration.identifier) {
                for statement in PostgresServerSchema.statements(of: migration.sql) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                var binds = PostgresBindings()
                binds.append(migration.identifier)
                binds.append(migration.checksum)
                try await connection.query(
                    PostgresQuery(unsafeSQL: "INSERT INTO groupstore.migrations (identifier, checksum) VALUES ($1, $2)", binds: binds),
                    logger: logger)
                ran.append(migration.identifier)
            }
            return ran
        }
    }
#endif  // Postgres
