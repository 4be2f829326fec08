#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO

    extension PostgresRemote {
        /// Shares this role's zone `zone` with the role `member` (`access`
        /// `nil`: stops sharing it with them), in `groupstore.shares`, which
        /// row-level security lets each owner manage for their own zones only.
        /// Listeners get a hint, so the member's running groups fetch the zone,
        /// or remove its records, at once.
        /// - Throws: ``CloudSyncError/Code/invalidConfiguration`` for a zone name
        ///   that is not 1 to 63 of `A-Z a-z 0-9 . _ -`, an empty member, this
        ///   role itself, or (when sharing) a role that does not exist.
        public func share(_ zone: String, with member: String, access: CloudShareAccess?) async throws {
            try await share(zone, with: member, access: access, as: nil)
        }

        func share(_ zone: String, with member: String, access: CloudShareAccess?, as role: String?) async throws {
            guard CloudZone.isZoneName(zone) else {
                throw CloudSyncError(
                    .invalidConfiguration, "a shared zone's name is 1 to 63 of A-Z a-z 0-9 . _ -, not \(String(reflecting: zone))")
            }
            try await perform("share a zone", as: role) { session in
                let user = try await user(session)
                guard !member.isEmpty, member != user else {
                    throw CloudSyncError(
                        .invalidConfiguration, "zone \(zone) of \(user) can be shared with another role, not \(String(reflecting: member))")
                }
                // Sharing with a role that does not exist would grant a role created later under that name.
                if access != nil, try await !roleExists(member, session) {
                    throw CloudSyncError(
                        .invalidConfiguration,
                        "zone \(zone) of \(user) cannot be shared with \(String(reflecting: member)): there is no such role on \(displayName)"
                    )
                }
                var binds = PostgresBindings()
                binds.append(zone)
                binds.append(member)
                let sql: String
                if let access {
                    binds.append(access == .readWrite)
                    sql = """
                        INSERT INTO groupstore.shares (owner, zone, member, can_write) VALUES (groupstore.user_name(), $1, $2, $3)
                        ON CONFLICT (owner, zone, member) DO UPDATE SET can_write = excluded.can_write
                        """
                } else {
                    sql = "DELETE FROM groupstore.shares WHERE owner = groupstore.user_name() AND zone = $1 AND member = $2"
                }
                _ = try await session.result(PostgresQuery(unsafeSQL: sql, binds: binds))
                logger.info(
                    "zone shared",
                    metadata: [
                        "remote": "\(displayName)", "zone": "\(CloudZone.shared(owner: user, name: zone))", "with": "\(member)",
                        "access": "\(access?.rawValue ?? "none")",
                    ])
            }
        }

        /// The shares of this role's zones and of the zones shared with it.
        public func shares() async throws -> [CloudShare] {
            try await shares(as: nil)
        }

        func shares(as role: String?) async throws -> [CloudShare] {
            try await perform("list shares", as: role) { session in
                let rows = try await session.cells(
                    "SELECT owner, zone, member, can_write::text FROM groupstore.shares ORDER BY owner, zone, member")
                return rows.compactMap { row in
                    guard let owner = row[0], let zone = row[1], let member = row[2] else { return nil }
                    return CloudShare(
                        zone: .shared(owner: owner, name: zone), user: member, access: row[3] == "true" ? .readWrite : .readOnly)
                }
            }
        }

        /// Whether `name` is a user of this server: a role (`pg_roles` is
        /// readable by every role), or a device (``PostgresServerSchema/devicePrefix``),
        /// which needs no enrolment.
        func roleExists(_ name: String, _ session: PostgresSession) async throws -> Bool {
            if name.hasPrefix(PostgresServerSchema.devicePrefix) {
                return name.count > PostgresServerSchema.devicePrefix.count && CloudZone.isUserName(name)
            }
            var binds = PostgresBindings()
            binds.append(name)
            let rows = try await session.cells(PostgresQuery(unsafeSQL: "SELECT 1::text FROM pg_roles WHERE rolname = $1", binds: binds))
            return !rows.isEmpty
        }

        /// What this role may do in the shared zone `zone` (`nil`: not even read
        /// it), by row-level security's own rules.
        func access(to zone: CloudZone, _ session: PostgresSession) async throws -> CloudShareAccess? {
            var binds = PostgresBindings()
            binds.append(zone.description)
            let rows = try await session.cells(
                PostgresQuery(unsafeSQL: "SELECT groupstore.may_read($1)::text, groupstore.may_write($1)::text", binds: binds))
            guard let row = rows.first else { return nil }
            if row[1] == "true" { return .readWrite }
            return row[0] == "true" ? .readOnly : nil
        }
    }
#endif  // Postgres
