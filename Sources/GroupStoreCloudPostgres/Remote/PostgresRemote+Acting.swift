#if Postgres
    import GroupStoreCloud
    import PostgresNIO
    import Synchronization

    extension PostgresRemote {
        /// The remote's operations acting as `role`, on this remote's pool (whose
        /// login role must be allowed to become it: `GRANT role TO login`), each
        /// in transactions that begin with `SET LOCAL ROLE` (see
        /// ``PostgresSession``): row-level security decides what it reads and
        /// writes exactly as for a remote that logs in as the role. For a gateway.
        ///
        /// - Parameter origin: what its writes' notifications carry (the
        ///   client's own origin), or `nil` for this remote's.
        /// - Parameter deadline: when each operation must have ended (a
        ///   gateway's request deadline): statements still running then are
        ///   aborted by the server (``PostgresSession``).
        ///
        /// - Parameter device: for the fleet's role (``PostgresServerSchema/deviceRole``),
        ///   the device it acts for (a verified token's `sub`; see ``PostgresServerSchema/fleet``).
        package func acting(
            as role: String, device: String? = nil, origin: String? = nil, deadline: ContinuousClock.Instant? = nil
        ) -> PostgresRoleRemote {
            PostgresRoleRemote(remote: self, role: role, device: device, origin: origin, deadline: deadline)
        }

        /// The notifications on the channel, with their zone tags, while the
        /// remote runs (a (re)connection of the listener is a notice of any zone).
        package func notices() -> AsyncStream<PostgresNotice> { noticeHub.stream(bufferingNewest: 1024) }

        /// The key of the notifications' zone tags (``PostgresNotice``), read as
        /// `groupstore_gateway`; `nil` when the login role may not become it or
        /// the server has no key (set up before the tags).
        package func hintKey() async throws -> String? {
            do {
                return try await perform("read the hint key", as: PostgresServerSchema.gatewayRole) { session in
                    let rows = try await session.cells("SELECT key FROM groupstore.hint_key LIMIT 1")
                    return rows.first?.first ?? nil
                }
            } catch let error as CloudSyncError where [.permissionDenied, .unauthorized, .badRemote].contains(error.code) {
                logger.info(
                    "cannot read the push hints' key: every hint goes to every connected client",
                    metadata: ["remote": "\(displayName)", "reason": "\(error.message)"])
                return nil
            }
        }

        /// Whether the server answers a statement on the pool and the listener is connected.
        package func isReady() async -> Bool {
            guard listening.load(ordering: .relaxed) else { return false }
            do {
                _ = try await perform("check the server") { session in try await session.cells("SELECT 1::text") }
                return true
            } catch {
                return false
            }
        }

        /// Whether the listener is connected (its notices are all there are).
        package var isListening: Bool { listening.load(ordering: .relaxed) }

        /// How many operations hold or wait for a pooled connection now.
        package var poolLeases: Int { leases.load(ordering: .relaxed) }
    }

    /// A ``PostgresRemote`` acting as one role (``PostgresRemote/acting(as:origin:)``):
    /// the remote operations, each as that role.
    package struct PostgresRoleRemote: Sendable {
        package let remote: PostgresRemote
        package let role: String
        /// The device the fleet's role acts for (`nil`: none, or another role):
        /// each transaction sets it as `groupstore.device`.
        package let device: String?
        package let origin: String?
        /// When each operation must have ended (``PostgresRemote/statementDeadline``), if ever.
        package let deadline: ContinuousClock.Instant?

        /// `body` with the operation's device and deadline set for its transactions.
        private func bounded<T>(_ body: () async throws -> T) async throws -> T {
            try await PostgresRemote.$actingDevice.withValue(device) {
                guard let deadline else { return try await body() }
                return try await PostgresRemote.$statementDeadline.withValue(deadline) { try await body() }
            }
        }

        package func account() async throws -> String { try await bounded { try await remote.account(as: role) } }
        package func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory {
            try await bounded { try await remote.history(keeping: mark, as: role) }
        }
        package func prepare(_ types: [CloudRecordType]) async throws { try await bounded { try await remote.prepare(types, as: role) } }
        package func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
            try await bounded { try await remote.modify(changes, as: role, origin: origin) }
        }
        /// A page of changes, and whether entries after it are held back by the
        /// transaction fence (fetch again shortly: their commit may send no notification).
        package func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int
        ) async throws -> (CloudChangeBatch, heldBack: Bool) {
            try await bounded { try await remote.fetchChanges(in: zone, since: token, limit: limit, as: role) }
        }
        /// `modify` on condition that `mark` is part of the history, checked in its transaction.
        package func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<
            [CloudModifyResult]
        > {
            try await bounded { try await remote.modify(changes, keeping: mark, as: role, origin: origin) }
        }
        /// A page of changes on condition that `mark` is part of the history, read in its transaction.
        package func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
        ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool) {
            try await bounded { try await remote.fetchChanges(in: zone, since: token, limit: limit, keeping: mark, as: role) }
        }
        /// A page of changes narrowed to `subscription`, its `claim(…)` bound
        /// to `claims` (the gateway's verified token's), on condition that
        /// `mark` is part of the history.
        package func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?,
            subscription: CloudSubscription, claims: [String: CloudValue]
        ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool) {
            let subset = PostgresSubset(subscription: subscription, claims: claims)
            return try await bounded {
                try await remote.fetchChanges(in: zone, since: token, limit: limit, keeping: mark, as: role, subset: subset)
            }
        }
        /// Of these records, those live, readable by the role and in the subset.
        package func selected(_ ids: [CloudRecordID], subscription: CloudSubscription, claims: [String: CloudValue]) async throws -> Set<
            CloudRecordID
        > {
            try await bounded {
                try await remote.selected(ids, as: role, subset: PostgresSubset(subscription: subscription, claims: claims))
            }
        }
        package func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> {
            try await bounded { try await remote.forgotten(records, as: role) }
        }
        package func missingAssets(_ hashes: [String]) async throws -> Set<String> {
            try await bounded { try await remote.missingAssets(hashes, as: role) }
        }
        package func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws {
            try await bounded { try await remote.uploadAsset(asset, bytes: bytes, as: role) }
        }
        package func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] {
            try await bounded { try await remote.downloadAsset(asset, as: role) }
        }
        package func share(_ zone: String, with user: String, access: CloudShareAccess?) async throws {
            try await bounded { try await remote.share(zone, with: user, access: access, as: role) }
        }
        package func shares() async throws -> [CloudShare] { try await bounded { try await remote.shares(as: role) } }
        package func report(_ report: CloudHostReport) async throws { try await bounded { try await remote.report(report, as: role) } }

        /// Of `zones`, those the role may read, by row-level security's own rule
        /// (`groupstore.may_read`).
        package func readable(_ zones: [CloudZone]) async throws -> Set<CloudZone> {
            guard !zones.isEmpty else { return [] }
            return try await bounded { try await readableNow(zones) }
        }

        private func readableNow(_ zones: [CloudZone]) async throws -> Set<CloudZone> {
            try await remote.perform("check zones", as: role) { session in
                var binds = PostgresBindings()
                binds.append(zones.map(\.description))
                let rows = try await session.cells(
                    PostgresQuery(
                        unsafeSQL: "SELECT z, groupstore.may_read(z)::text FROM unnest($1::text[]) AS z", binds: binds))
                return Set(rows.compactMap { row in row[1] == "true" ? row[0].flatMap(CloudZone.init(description:)) : nil })
            }
        }
    }
#endif  // Postgres
