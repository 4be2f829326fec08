#if Gateway
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import Logging
    import ServiceLifecycle
    import Synchronization

    /// A gateway's backend on a PostgreSQL server: one ``PostgresRemote`` that
    /// logs in as the *authenticator* role, with a pool of a few connections
    /// and one listener, whatever the number of clients; each request runs as
    /// the role its token names (`SET LOCAL ROLE`), so row-level security
    /// decides as it does for a client that logs in as that role.
    ///
    /// The authenticator is `NOINHERIT` (it has no rights of its own), granted
    /// each user role (`GRANT alice TO authenticator`), and `groupstore_gateway`
    /// to read the key of the notifications' zone tags (without it, every
    /// notification is a hint to every client).
    public final class PostgresGatewayBackend: GatewayBackend {
        public let remote: PostgresRemote
        public var displayName: String { remote.displayName }
        let logger: Logger
        private let key = Mutex<String?>(nil)
        private let notified = Broadcast<GatewayNotice>()
        private let checks = RoleChecks()

        /// - Parameters:
        ///   - url: the authenticator's `postgres://` URL.
        ///   - poolSize: the most pooled connections (the listener has one more).
        /// - Throws: `CloudSyncError` (``CloudSyncError/Code/badRemote``) for a URL that does not parse.
        public init(url: String, poolSize: Int = 10, logger: Logger = Logger(label: "GroupStoreGateway")) throws {
            remote = try PostgresRemote(url: url, maximumConnections: poolSize, poolPerEventLoop: true, logger: logger)
            self.logger = logger
        }

        /// Runs the pool and the listener, reads the tags' key once the pool
        /// runs, and hands the notifications on, until shutdown.
        public func run() async throws {
            let notices = remote.notices()
            await withDiscardingTaskGroup { group in
                group.addTask { try? await self.remote.run() }
                group.addTask { await self.readKey() }
                group.addTask(executorPreference: remote.noticeExecutor) {
                    for await notice in notices {
                        self.notified.yield(
                            GatewayNotice(origin: notice.origin, tags: notice.tags), droppedSaying: GatewayNotice(origin: "", tags: nil))
                    }
                    self.notified.finish()
                }
            }
        }

        /// Reads the key, retrying with backoff while the server cannot be reached.
        private func readKey() async {
            var delay = 0.1
            while !Task.isCancelled {
                do {
                    let value = try await remote.hintKey()
                    key.withLock { $0 = value }
                    if value != nil { notified.yield(GatewayNotice(origin: "", tags: nil)) }
                    return
                } catch {
                    logger.info("cannot read the push hints' key yet", metadata: ["remote": "\(displayName)", "error": "\(error)"])
                    try? await Task.sleep(for: .seconds(delay))
                    delay = min(delay * 2, 5)
                }
            }
        }

        public func acting(as identity: GatewayIdentity, origin: String?) -> any GatewayRoleDatabase {
            PostgresRoleDatabase(remote: remote.acting(as: identity.role, device: identity.device, origin: origin), checks: checks)
        }

        /// Each transaction of the operations sets `statement_timeout` to the
        /// time left until `deadline`: PostgreSQL aborts a statement still
        /// running then, the transaction rolls back (nothing of it commits),
        /// and its connection goes back to the pool.
        public func acting(as identity: GatewayIdentity, origin: String?, deadline: ContinuousClock.Instant) -> any GatewayRoleDatabase {
            PostgresRoleDatabase(
                remote: remote.acting(as: identity.role, device: identity.device, origin: origin, deadline: deadline), checks: checks)
        }

        public func notices() -> AsyncStream<GatewayNotice> { notified.stream(bufferingNewest: 4096) }

        /// The listener's event loop: the notices are handed on there (``GatewayBackend/noticeExecutor``).
        public var noticeExecutor: (any TaskExecutor)? { remote.noticeExecutor }

        public func tag(of text: String) -> String? {
            key.withLock { $0 }.map { PostgresNotice.tag(of: text, key: $0) }
        }

        public func isReady() async -> Bool { await remote.isReady() }

        public var isListening: Bool { remote.isListening }

        public var poolUse: (leases: Int, size: Int) { (remote.poolLeases, remote.maximumConnections) }

        /// In one statement, as `groupstore_gateway` (`groupstore.report_hosts`):
        /// a report of a role the authenticator may not become is not kept.
        public func report(_ reports: [(identity: GatewayIdentity, report: CloudHostReport)]) async throws {
            _ = try await remote.report(reports.map { ($0.identity.role, $0.identity.device, $0.report) })
        }
    }

    /// ``PostgresRoleRemote`` as a gateway's role database: before an
    /// operation, the role's account is checked (``RoleChecks``), so a role
    /// that bypasses row-level security is refused whatever the request.
    struct PostgresRoleDatabase: GatewayRoleDatabase {
        let remote: PostgresRoleRemote
        let checks: RoleChecks

        /// Runs `body` once the role passed its check.
        private func checked<T>(_ body: () async throws -> T) async throws -> T {
            try await checks.ensure(remote.role) { _ = try await remote.account() }
            return try await body()
        }

        func account() async throws -> String { try await remote.account() }
        func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory {
            try await checked { try await remote.history(keeping: mark) }
        }
        func prepare(_ types: [CloudRecordType]) async throws { try await checked { try await remote.prepare(types) } }
        func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
            try await checked { try await remote.modify(changes) }
        }
        func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> (CloudChangeBatch, heldBack: Bool)
        {
            try await checked { try await remote.fetchChanges(in: zone, since: token, limit: limit) }
        }
        func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<
            [CloudModifyResult]
        > {
            try await checked { try await remote.modify(changes, keeping: mark) }
        }
        func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
        ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool) {
            try await checked { try await remote.fetchChanges(in: zone, since: token, limit: limit, keeping: mark) }
        }
        func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?,
            subscription: CloudSubscription, claims: [String: CloudValue]
        ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool) {
            try await checked {
                try await remote.fetchChanges(
                    in: zone, since: token, limit: limit, keeping: mark, subscription: subscription, claims: claims)
            }
        }
        func selected(_ ids: [CloudRecordID], subscription: CloudSubscription, claims: [String: CloudValue]) async throws -> Set<
            CloudRecordID
        > {
            try await checked { try await remote.selected(ids, subscription: subscription, claims: claims) }
        }
        func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> {
            try await checked { try await remote.forgotten(records) }
        }
        func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await checked { try await remote.missingAssets(hashes) } }
        func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws {
            try await checked { try await remote.uploadAsset(asset, bytes: bytes) }
        }
        func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] { try await checked { try await remote.downloadAsset(asset) } }
        func share(_ zone: String, with user: String, access: CloudShareAccess?) async throws {
            try await checked { try await remote.share(zone, with: user, access: access) }
        }
        func shares() async throws -> [CloudShare] { try await checked { try await remote.shares() } }
        func report(_ report: CloudHostReport) async throws { try await checked { try await remote.report(report) } }
        func readable(_ zones: [CloudZone]) async throws -> Set<CloudZone> { try await checked { try await remote.readable(zones) } }
    }
#endif  // Gateway
