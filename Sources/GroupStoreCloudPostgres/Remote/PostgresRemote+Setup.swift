#if Postgres
    import Foundation
    import GroupStoreCloud
    import Logging
    import PostgresNIO

    extension PostgresRemote {
        /// Creates or upgrades the GroupStore schema on the server at `url`
        /// (idempotent), as the URL's role, which must be allowed to create
        /// schemas and roles (the database's owner with `CREATEROLE`, or a
        /// superuser). Each user role is then granted `groupstore_user`.
        /// - Returns: one line saying what the server is now.
        /// - Throws: ``CloudSyncError/Code/badRemote`` for a server that cannot
        ///   be reached, a schema of a newer format, or a role not allowed to
        ///   create it.
        public static func setup(url text: String, logger: Logger = Logger(label: "GroupStoreCloudPostgres")) async throws -> String {
            let url = try PostgresURL(text)
            let display = url.description
            let quiet = quiet(logger, below: .notice)
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(configuration: url.connectionConfiguration(), id: 0, logger: quiet)
            } catch {
                throw CloudSyncError(.badRemote, "cannot reach \(display): \(Self.reason(error))", underlying: error)
            }
            do {
                let exists = try await cells(connection.query("SELECT (to_regclass('groupstore.meta') IS NOT NULL)::text", logger: quiet))
                var format: Int?
                if (exists.first?.first ?? nil) == "true" {
                    let rows = try await cells(connection.query("SELECT value FROM groupstore.meta WHERE key = 'format'", logger: quiet))
                    format = (rows.first?.first ?? nil).flatMap { Int($0) }
                }
                if let format, format > PostgresServerSchema.format {
                    throw CloudSyncError(
                        .badRemote,
                        "\(display) has GroupStore schema format \(format); this GroupStore sets up format \(PostgresServerSchema.format): upgrade GroupStore"
                    )
                }
                try await connection.query("BEGIN", logger: quiet)
                try await connection.query("SELECT pg_advisory_xact_lock(hashtext('groupstore.setup'))", logger: quiet)
                let ran = try await PostgresMigrator(connection: connection, logger: quiet).migrate(PostgresServerSchema.migrations)
                try await connection.query("COMMIT", logger: quiet)
                try? await connection.close()
                logger.debug("GroupStore schema set up", metadata: ["remote": "\(display)"])
                if let format {
                    if format < PostgresServerSchema.format {
                        return "\(display): GroupStore schema upgraded from format \(format) to \(PostgresServerSchema.format)"
                    }
                    return ran.isEmpty
                        ? "\(display): GroupStore schema is up to date (format \(format))"
                        : "\(display): GroupStore schema is up to date (format \(format)); ran \(ran.joined(separator: ", "))"
                }
                return "\(display): GroupStore schema created (format \(PostgresServerSchema.format)); grant each user role groupstore_user"
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: quiet)
                try? await connection.close()
                if let error = error as? CloudSyncError { throw error }
                let failure = PostgresFailure.cloudError(error, doing: "set up the GroupStore schema", remote: display)
                throw CloudSyncError(.badRemote, failure.message, underlying: error)
            }
        }

        static func reason(_ error: any Error) -> String {
            if let (_, message) = PostgresFailure.serverError(error) { return message }
            if let error = error as? PSQLError { return "\(error.code)" + (error.underlying.map { ": \($0)" } ?? "") }
            return "\(error)"
        }
    }

    extension PostgresServerSchema {
        /// `sql` split into statements (at a `;` ending a line outside a
        /// dollar-quoted body), for the extended protocol, which takes one
        /// statement at a time.
        static func statements(of sql: String) -> [String] {
            var statements: [String] = []
            var current = ""
            var inBody = false
            for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("--") || (trimmed.isEmpty && current.isEmpty) { continue }
                current += line + "\n"
                let quotes = line.components(separatedBy: "$fn$").count - 1 + line.components(separatedBy: "$do$").count - 1
                if quotes % 2 == 1 { inBody.toggle() }
                if !inBody && trimmed.hasSuffix(";") {
                    statements.append(current)
                    current = ""
                }
            }
            if !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { statements.append(current) }
            return statements
        }
    }
#endif  // Postgres
