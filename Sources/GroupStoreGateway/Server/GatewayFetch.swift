#if Gateway
    import GroupStoreCloud
    import GroupStoreCloudHTTP

    /// The gateway's fetch: `/v1/fetch` and `/v1/fetch-subscribed`, and the
    /// same fetch made for a push connection ahead of its request
    /// (``PushHub``, a ``GatewayWire/Prefetch``). Either way it is read as the
    /// caller's verified identity, narrowed by its token's restrictions, and
    /// answered by the gateway's memory when it may be (``FetchMemory``; with
    /// ``GatewayConfiguration/remembersFetches``): a prefetch and a request
    /// of the same fetch then share one read.
    struct GatewayFetch: Sendable {
        let fetchMemory: FetchMemory
        let metrics: GatewayMetrics
        /// Whether answers are shared (``GatewayConfiguration/remembersFetches``).
        let remembers: Bool

        /// The page `asked` answers for `identity`, read within `deadline`.
        /// - Throws: ``GroupStoreCloud/CloudSyncError/Code/invalidConfiguration``
        ///   for a subscription that does not parse; what the database said.
        func answer(_ asked: GatewayWire.Prefetch, identity: GatewayIdentity, origin: String?, deadline: RequestDeadline) async throws
            -> GatewayWire.Batch
        {
            let subscription = try (asked.subscription?.parsed() ?? CloudSubscription()).restricted(by: identity.restrictions)
            let (fetch, claims, plain) = (asked.fetch, identity.claims, asked.subscription == nil)
            let read: @Sendable (any GatewayRoleDatabase) async throws -> GatewayWire.Batch = { database in
                guard plain, subscription.isEmpty else { return try await Self.fetch(fetch, subscription, claims: claims, database) }
                return try await Self.fetch(fetch, database)
            }
            @Sendable func run<T: Sendable>(_ body: @escaping @Sendable (any GatewayRoleDatabase) async throws -> T) async throws -> T {
                try await deadline.run("fetch", identity: identity, origin: origin, body)
            }
            guard remembers else {
                metrics.fetched(fromMemory: false)
                return try await run(read)
            }
            // The key of a request to /v1/fetch or /v1/fetch-subscribed, as it was asked.
            let key =
                if let requested = asked.subscription {
                    try FetchMemory.Key(
                        identity: identity, endpoint: GatewayWire.apiPrefix + "/fetch-subscribed",
                        request: GatewayWire.SubscribedFetchRequest(fetch: fetch, subscription: requested), subscription: subscription)
                } else {
                    try FetchMemory.Key(
                        identity: identity, endpoint: GatewayWire.apiPrefix + "/fetch", request: fetch, subscription: subscription)
                }
            let zone = fetch.zone
            let answer = try await fetchMemory.answer(
                key, zone: zone, identity: identity,
                mayRead: { try await run { try await $0.readable([zone]) }.contains(zone) },
                read: { try await run(read) })
            metrics.fetched(fromMemory: answer.fromMemory, lag: answer.lag)
            return answer.batch
        }

        /// The page `asked` answers for a request of the API.
        func answer(_ asked: GatewayWire.Prefetch, _ context: AuthenticatedContext) async throws -> GatewayWire.Batch {
            try await answer(asked, identity: context.identity, origin: context.origin, deadline: context.deadline)
        }

        private static func fetch(
            _ asked: GatewayWire.FetchRequest, _ database: any GatewayRoleDatabase
        ) async throws -> GatewayWire.Batch {
            guard let history = asked.history else {
                let (batch, heldBack) = try await database.fetchChanges(in: asked.zone, since: asked.token, limit: asked.limit)
                return GatewayWire.Batch(batch, heldBack: heldBack)
            }
            let (answer, heldBack) = try await database.fetchChanges(
                in: asked.zone, since: asked.token, limit: asked.limit, keeping: history.mark)
            let page =
                answer.value ?? CloudChangeBatch(changed: [], deleted: [], token: asked.token ?? CloudChangeToken(""), moreComing: false)
            return GatewayWire.Batch(page, heldBack: heldBack, history: GatewayWire.History(answer.history))
        }

        /// A fetch narrowed to `subscription`, its `claim(…)` bound to the
        /// verified token's `claims`: what the client sent can narrow what its
        /// role may read, never name whose rows it reads.
        private static func fetch(
            _ asked: GatewayWire.FetchRequest, _ subscription: CloudSubscription, claims: [String: CloudValue],
            _ database: any GatewayRoleDatabase
        ) async throws -> GatewayWire.Batch {
            let (answer, heldBack) = try await database.fetchChanges(
                in: asked.zone, since: asked.token, limit: asked.limit, keeping: asked.history?.mark, subscription: subscription,
                claims: claims)
            let page =
                answer.value ?? CloudChangeBatch(changed: [], deleted: [], token: asked.token ?? CloudChangeToken(""), moreComing: false)
            return GatewayWire.Batch(page, heldBack: heldBack, history: asked.history.map { _ in GatewayWire.History(answer.history) })
        }
    }
#endif  // Gateway
