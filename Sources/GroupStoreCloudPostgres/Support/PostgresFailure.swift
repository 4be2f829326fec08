#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO

    /// How PostgreSQL's and postgres-nio's errors become the bridge's
    /// ``CloudSyncError``s, whose codes the sync engine acts on.
    enum PostgresFailure {
        /// SQLSTATEs that mean "try again later": serialization failures and
        /// deadlocks, lock timeouts, cancelled queries, a server shutting down or
        /// starting, too many connections, connection failures.
        static func isTransient(_ sqlState: String) -> Bool {
            ["40001", "40P01", "55P03", "57014", "57P01", "57P02", "57P03", "53300", "53400"].contains(sqlState)
                || sqlState.hasPrefix("08") || sqlState.hasPrefix("53")
        }

        /// The server's SQLSTATE and message of `error`, if it came from the server.
        static func serverError(_ error: any Error) -> (state: String, message: String)? {
            guard let error = error as? PSQLError, error.code == .server, let info = error.serverInfo else { return nil }
            return (info[.sqlState] ?? "", info[.message] ?? "")
        }

        static func cloudError(_ error: any Error, doing what: String, remote: String) -> CloudSyncError {
            if let error = error as? CloudSyncError { return error }
            if let (state, message) = serverError(error) {
                switch state {
                case "GS001":
                    return CloudSyncError(.scopeChanged, "\(remote): \(message)", underlying: error)
                case "GS002":
                    return CloudSyncError(.tableRefused, "\(remote): \(message)", underlying: error)
                case "GS010":
                    return CloudSyncError(.badRemote, "\(remote): \(message)", underlying: error)
                case "42501":
                    return CloudSyncError(.permissionDenied, "\(remote): permission denied to \(what): \(message)", underlying: error)
                case "3F000", "42P01", "42883", "42704":
                    return CloudSyncError(
                        .badRemote,
                        "\(remote) has no (or an incomplete) GroupStore schema (\(message)): run `groupstore cloud setup --remote URL`",
                        underlying: error)
                case "28000", "28P01":
                    return CloudSyncError(.badRemote, "\(remote): cannot log in: \(message)", underlying: error)
                case "3D000":
                    return CloudSyncError(.badRemote, "\(remote): \(message)", underlying: error)
                case let state where isTransient(state):
                    return CloudSyncError(.transient, "\(remote) failed to \(what) for now: \(message)", underlying: error)
                default:
                    return CloudSyncError(.badRemote, "\(remote) failed to \(what): \(message) (SQLSTATE \(state))", underlying: error)
                }
            }
            if let error = error as? PSQLError {
                return CloudSyncError(
                    .transient, "\(remote): \(what) failed: \(error.code) (the connection to the server)", underlying: error)
            }
            return CloudSyncError(.transient, "\(remote): \(what) failed: \(error)", underlying: error)
        }
    }
#endif  // Postgres
