#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO

    extension PostgresRemote {
        public func report(_ report: CloudHostReport) async throws {
            try await self.report(report, as: nil)
        }

        /// Keeps `report` as the acting user's entry for its host in `groupstore.hosts`.
        func report(_ report: CloudHostReport, as role: String?) async throws {
            try await perform("report this host", as: role) { session in
                var binds = PostgresBindings()
                binds.append(report.host)
                binds.append(report.appVersion)
                binds.append(String(decoding: try JSONEncoder().encode(report.tokens), as: UTF8.self))
                binds.append(report.pending)
                binds.append(report.parked)
                binds.append(report.lastError)
                // Seconds, and only a time PostgreSQL can hold (a client's report is anyone's input).
                binds.append(report.syncedAt.map(\.timeIntervalSince1970).flatMap { abs($0) < 1e11 ? $0 : nil })
                _ = try await session.result(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO groupstore.hosts AS h (host, app_version, tokens, pending, parked, last_error, synced_at, seen_at)
                            VALUES ($1, $2, $3::jsonb, $4, $5, $6, to_timestamp($7::double precision), now())
                            ON CONFLICT (user_name, host) DO UPDATE SET app_version = excluded.app_version, tokens = excluded.tokens,
                              pending = excluded.pending, parked = excluded.parked, last_error = excluded.last_error,
                              synced_at = coalesce(excluded.synced_at, h.synced_at), seen_at = now()
                            """, binds: binds))
            }
        }

        /// Keeps each of `reports` as its user's entry for its host, in one
        /// statement run as `groupstore_gateway` (`groupstore.report_hosts`,
        /// ``PostgresServerSchema/hostReports``): for a gateway, its clients'
        /// reports, each with the role and device its verified token names.
        /// - Returns: how many were kept (none for a role the login role may not become).
        package func report(_ reports: [(role: String, device: String?, report: CloudHostReport)]) async throws -> Int {
            guard !reports.isEmpty else { return 0 }
            let rows = reports.map { HostReportRow(role: $0.role, device: $0.device, $0.report) }
            var binds = PostgresBindings()
            binds.append(String(decoding: try JSONEncoder().encode(rows), as: UTF8.self))
            return try await perform("report \(reports.count) hosts", as: PostgresServerSchema.gatewayRole) { session in
                let cells = try await session.cells(
                    PostgresQuery(unsafeSQL: "SELECT groupstore.report_hosts($1::jsonb)::text", binds: binds))
                return (cells.first?.first ?? nil).flatMap { Int($0) } ?? 0
            }
        }

        /// Every host's last report, and how far behind each is (`groupstore
        /// cloud fleet`), as the schema's owner reads them: the changes logged
        /// in the host's zones after the tokens it reported, of records
        /// another user wrote last (`groupstore.behind`), counted now.
        public func fleet() async throws -> CloudFleet {
            try await perform("read the fleet") { session in
                let rows = try await session.cells(
                    """
                    SELECT h.user_name, h.host, h.app_version, h.pending::text, h.parked::text, h.last_error,
                      extract(epoch FROM h.synced_at)::text, extract(epoch FROM h.seen_at)::text,
                      (SELECT coalesce(sum(groupstore.behind(t.key, split_part(t.value, '/', 3)::xid8, split_part(t.value, '/', 4)::bigint, h.user_name)), 0)
                       FROM jsonb_each_text(h.tokens) AS t WHERE t.value ~ '^p/[^/]*/[0-9]{1,19}/[0-9]{1,18}$')::text
                    FROM groupstore.hosts AS h ORDER BY h.user_name, h.host
                    """)
                let now = try await session.cells("SELECT extract(epoch FROM now())::text")
                // A time read back: finite, or none (a role may write `infinity` into its own row).
                func seconds(_ text: String??) -> Double? { (text ?? nil).flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil } }
                let serverNow = Date(timeIntervalSince1970: seconds(now.first?.first) ?? Date().timeIntervalSince1970)
                let hosts = rows.map { row in
                    CloudFleet.Host(
                        user: row[0] ?? "", host: row[1] ?? "", appVersion: row[2], pending: Int(row[3] ?? "") ?? 0,
                        parked: Int(row[4] ?? "") ?? 0, lastError: row[5],
                        syncedAt: seconds(row[6]).map { Date(timeIntervalSince1970: $0) },
                        seenAt: Date(timeIntervalSince1970: seconds(row[7]) ?? 0), behind: Int(row[8] ?? "") ?? 0)
                }
                return CloudFleet(hosts: hosts, now: serverNow)
            }
        }
    }

    /// A report as `groupstore.report_hosts` reads it (one element of its JSON array).
    private struct HostReportRow: Encodable {
        var role: String
        var device: String?
        var host: String
        var app_version: String?
        var tokens: [String: String]
        var pending: Int
        var parked: Int
        var last_error: String?
        var synced_at: Double?

        init(role: String, device: String?, _ report: CloudHostReport) {
            self.role = role
            self.device = device
            host = report.host
            app_version = report.appVersion
            tokens = report.tokens
            pending = report.pending
            parked = report.parked
            last_error = report.lastError
            synced_at = report.syncedAt?.timeIntervalSince1970
        }
    }
#endif  // Postgres
