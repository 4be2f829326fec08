#if Gateway
    import AsyncHTTPClient
    import Foundation
    import GroupStoreCloud
    import Logging
    import NIOHTTP1
    import ServiceLifecycle
    import Synchronization

    /// The bridge's remote through a sync gateway (`groupstore serve`): the
    /// remote operations over HTTP(S), each with a bearer token whose `role`
    /// claim names the database role the gateway acts as, and push hints on a
    /// WebSocket.
    ///
    /// ```swift
    /// let remote = try GatewayRemote(
    ///     GatewayRemote.Configuration(url: "https://sync.example.com:8443", token: token), logger: logger)
    /// var configuration = CloudSyncConfiguration(group: "/var/lib/myapp/group", remote: remote, logger: logger)
    /// configuration.privateTables = ["note"]
    /// try await ServiceGroup(services: [remote, CloudSync(configuration)], logger: logger).run()
    /// ```
    ///
    /// The remote is a `Service`: its ``run()`` keeps the push connection open,
    /// reconnecting with backoff (to the next gateway of the URL when it lists
    /// several), and every (re)connection is a push hint, so the bridge fetches
    /// whatever it missed meanwhile. The gateway holds no session: any gateway
    /// serves any request.
    ///
    /// Errors are ``CloudSyncError``s with the code the gateway named (the
    /// database's decision, as with a direct PostgreSQL remote), ``CloudSyncError/Code/unauthorized``
    /// for a token the gateway refuses, and ``CloudSyncError/Code/transient``
    /// when no gateway answers.
    public final class GatewayRemote: CloudDatabase {
        /// Where the gateway is and who the client is.
        public struct Configuration: Sendable {
            /// `http://HOST:PORT` or `https://HOST:PORT`; several gateways as
            /// `https://HOST:PORT,HOST:PORT`.
            public var url: String
            /// The bearer token (a JWT whose `role` claim names the database role).
            public var token: String
            /// A file the token was read from: read again when the gateway
            /// refuses the token, so a renewed token is picked up without a restart.
            public var tokenFile: String?
            /// A PEM file of the certificate authorities to trust for `https`
            /// (default: the system's).
            public var trustRoots: String?
            /// How long one request may take.
            public var requestTimeout: TimeInterval = 60

            public init(url: String, token: String, tokenFile: String? = nil, trustRoots: String? = nil) {
                self.url = url
                self.token = token
                self.tokenFile = tokenFile
                self.trustRoots = trustRoots
            }
        }

        public let configuration: Configuration
        public var displayName: String { endpoints.description }

        let endpoints: GatewayEndpoints
        let transport: GatewayTransport
        let logger: Logger
        let hints = PushHints()
        /// What this client's writes carry, so that its push connection tells them apart.
        let origin = UUID().uuidString
        /// The zones fetched, which the push connection subscribes to.
        let zones = Mutex<Set<CloudZone>>([])
        /// Whether the gateway checks a mark in the same transaction as the
        /// call (`nil`: not known yet, and taken to; learned from each answer
        /// to a fetch that asked: a gateway of an older build answers none,
        /// and its calls are checked apart; and from a `/modify-checked` it
        /// has no route for, behind gateways of mixed builds).
        let checksHistory = Mutex<Bool?>(nil)
        /// Tells the push connection that ``zones`` or ``armed`` changed.
        let zonesChanged = Broadcast<Void>()
        /// The fetch this client will make next in each zone, for the gateway
        /// to make when the zone changes and send with the hint (see ``GatewayWire/Prefetch``).
        /// Each with whether the push connection sent it.
        let armed = Mutex<[CloudZone: (prefetch: GatewayWire.Prefetch, sent: Bool)]>([:])
        /// The pages the gateway sent with its hints (``Prefetched``).
        let prefetched = Prefetched()
        /// Every message the push connection received (for tests: what the gateway subscribed, each hint).
        let pushMessages = Broadcast<GatewayWire.PushMessage>()
        /// Each refusal of the push connection by the gateway (its close code
        /// and sentence as a ``CloudSyncError``: ``CloudSyncError/Code/unauthorized``
        /// for the token or the role, ``CloudSyncError/Code/rateLimited`` for too many).
        let pushRefusals = Broadcast<CloudSyncError>()
        /// Fetches again shortly when the server held changes back (``FencePoll``).
        let poll = FencePoll()

        /// - Throws: ``CloudSyncError/Code/badRemote`` for a URL that is not a gateway's.
        public convenience init(_ configuration: Configuration, logger: Logger = Logger(label: "GroupStoreCloudHTTP")) throws {
            try self.init(configuration, client: Self.sharedClient, logger: logger)
        }

        /// The HTTP client of every remote made with the public initializer. A
        /// connection that cannot be made fails its request at once (AsyncHTTPClient's
        /// default retries until the request's deadline), so that the next
        /// gateway of the URL is tried, and a refused certificate is said at once.
        /// Never shut down: it lives as long as the process, as `HTTPClient.shared` does.
        static let sharedClient: HTTPClient = {
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.retryConnectionEstablishment = false
            return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        }()

        /// A remote whose requests go through `client` (the benchmark's many
        /// simulated bridges share one with a larger pool).
        package init(_ configuration: Configuration, client: HTTPClient, logger: Logger) throws {
            self.configuration = configuration
            self.logger = logger
            endpoints = try GatewayEndpoints(configuration.url)
            transport = GatewayTransport(
                endpoints: endpoints, token: configuration.token, tokenFile: configuration.tokenFile, trustRoots: configuration.trustRoots,
                timeout: configuration.requestTimeout, origin: origin, client: client, logger: logger)
        }

        /// Keeps the push connection until cancelled or told to shut down
        /// gracefully, then ends the ``pushHints()`` streams.
        public func run() async throws {
            await cancelWhenGracefulShutdown {
                await PushConnection(remote: self).run()
            }
            hints.finish()
            zonesChanged.finish()
            pushMessages.finish()
            pushRefusals.finish()
        }

        public func pushHints() -> AsyncStream<Void> { hints.stream() }

        /// The role the token names, as the gateway checked it against the database.
        public func account() async throws -> String {
            try await transport.call(.POST, "/account", json: nil as String?, as: GatewayWire.Account.self, doing: "check the account").user
        }

        /// The remote's history as the gateway read it from the database, as the token's role.
        public func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory {
            try await transport.call(
                .POST, "/history", json: GatewayWire.HistoryRequest(mark: mark), as: GatewayWire.History.self,
                doing: "read the remote's history"
            ).history
        }

        public func prepare(_ types: [CloudRecordType]) async throws {
            _ = try await transport.call(.POST, "/prepare", json: types, as: [String: String].self, doing: "prepare the record types")
        }

        public func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
            guard !changes.isEmpty else { return [] }
            let answer = try await prefetched.writing(changes) {
                try await transport.call(
                    .POST, "/modify", json: changes.map(GatewayWire.Change.init), as: [GatewayWire.Result].self, doing: "save records")
            }
            let results = answer.compactMap(\.result)
            guard results.count == changes.count else {
                throw CloudSyncError(.transient, "\(displayName) answered \(results.count) results for \(changes.count) changes")
            }
            return results
        }

        /// `/modify-checked`: the gateway checks `mark` in the transaction of
        /// the changes. A gateway known not to (see ``checksHistory``), or one
        /// that turns out to have no such route (it wrote nothing), has the
        /// history asked before and after (`/history`, `/modify`, `/history`).
        public func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<
            [CloudModifyResult]
        > {
            let apart = {
                try await CloudHistoryChecked.apart(keeping: mark, writes: true, history: self.history(keeping:)) {
                    try await self.modify(changes)
                }
            }
            guard checksHistory.withLock({ $0 }) != false else { return try await apart() }
            let answer: GatewayWire.ModifyAnswer
            do {
                answer = try await prefetched.writing(changes) {
                    try await transport.callIfRouted(
                        .POST, "/modify-checked",
                        json: GatewayWire.ModifyRequest(changes: changes.map(GatewayWire.Change.init), mark: mark),
                        as: GatewayWire.ModifyAnswer.self, doing: "save records")
                }
            } catch is GatewayTransport.RouteMissing {
                checksHistory.withLock { $0 = false }
                logger.info(
                    "the gateway has no /modify-checked (an older build): its history is asked apart",
                    metadata: ["gateway": "\(transport.endpoints.base)"])
                return try await apart()
            }
            guard let answered = answer.results else { return CloudHistoryChecked(value: nil, history: answer.history.history) }
            let results = answered.compactMap(\.result)
            guard results.count == changes.count else {
                throw CloudSyncError(.transient, "\(displayName) answered \(results.count) results for \(changes.count) changes")
            }
            return CloudHistoryChecked(value: results, history: answer.history.history)
        }

        public func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
            try await fetch(GatewayWire.FetchRequest(zone: zone, token: token, limit: limit)).answer.batch
        }

        /// The page read by the gateway in the transaction that checks `mark`;
        /// from a gateway of an older build, which answers no history, the
        /// history is asked after the page (which is dropped if the mark is not kept).
        public func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
        ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
            let (answer, fresh) = try await fetch(
                GatewayWire.FetchRequest(zone: zone, token: token, limit: limit, history: GatewayWire.HistoryRequest(mark: mark)))
            checksHistory.withLock { $0 = answer.history != nil }
            var history: CloudRemoteHistory
            if let answered = answer.history { history = answered.history } else { history = try await self.history(keeping: mark) }
            history.nowIsFresh = history.nowIsFresh && fresh
            return CloudHistoryChecked(value: history.keepsMark ? answer.batch : nil, history: history)
        }

        /// The page read by the gateway narrowed to `subscription`: its
        /// parameters bound here, its `claim(…)` bound by the gateway from the
        /// token it verified (see ``GroupStoreCloud/CloudSubscription``).
        /// - Throws: ``GroupStoreCloud/CloudSyncError/Code/invalidConfiguration``
        ///   from a gateway of an older build, which does not evaluate subscriptions.
        public func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?, subscription: CloudSubscription
        ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
            guard !subscription.isEmpty else { return try await fetchChanges(in: zone, since: token, limit: limit, keeping: mark) }
            let request = GatewayWire.FetchRequest(zone: zone, token: token, limit: limit, history: GatewayWire.HistoryRequest(mark: mark))
            let (answer, fresh) = try await fetch(request, subscription: GatewayWire.Subscription(subscription))
            guard var history = answer.history?.history else {
                throw CloudSyncError(.badRemote, "\(displayName) answered a subscribed fetch without the history it was asked")
            }
            history.nowIsFresh = fresh
            return CloudHistoryChecked(value: history.keepsMark ? answer.batch : nil, history: history)
        }

        /// Of these records, those live, readable by this token's role and in
        /// `subscription`'s subset, as the gateway evaluates it.
        public func selected(_ ids: [CloudRecordID], subscription: CloudSubscription) async throws -> Set<CloudRecordID> {
            guard !subscription.isEmpty else { return Set(ids) }
            guard !ids.isEmpty else { return [] }
            let request = GatewayWire.SelectRequest(ids: ids, subscription: GatewayWire.Subscription(subscription))
            do {
                return Set(
                    try await transport.callIfRouted(.POST, "/select", json: request, as: [CloudRecordID].self, doing: "select records"))
            } catch is GatewayTransport.RouteMissing {
                throw olderGateway
            }
        }

        /// What a gateway without the subscribed routes (an older build) means.
        private var olderGateway: CloudSyncError {
            CloudSyncError(.invalidConfiguration, "\(displayName) does not evaluate subscriptions (an older gateway): upgrade it")
        }

        /// The answer to `request`, and whether it was read for this call
        /// (not a page the gateway sent with a hint, which answers it when it
        /// can: ``Prefetched``).
        private func fetch(_ request: GatewayWire.FetchRequest, subscription: GatewayWire.Subscription? = nil) async throws
            -> (answer: GatewayWire.Batch, fresh: Bool)
        {
            let asked = GatewayWire.Prefetch(fetch: request, subscription: subscription)
            if let answer = prefetched.take(asked) {
                arm(after: asked, answer)
                poll.fetched(heldBack: answer.heldBack) { [hints] in hints.yield() }
                return (answer, false)
            }
            let answer: GatewayWire.Batch
            do {
                if let subscription {
                    do {
                        answer = try await transport.callIfRouted(
                            .POST, "/fetch-subscribed",
                            json: GatewayWire.SubscribedFetchRequest(fetch: request, subscription: subscription),
                            as: GatewayWire.Batch.self, doing: "fetch changes")
                    } catch is GatewayTransport.RouteMissing {
                        throw olderGateway
                    }
                } else {
                    answer = try await transport.call(.POST, "/fetch", json: request, as: GatewayWire.Batch.self, doing: "fetch changes")
                }
            } catch let error as CloudSyncError where error.code == .permissionDenied {
                if zones.withLock({ $0.remove(request.zone) }) != nil { zonesChanged.yield(()) }
                throw error
            }
            if zones.withLock({ $0.insert(request.zone).inserted }) { zonesChanged.yield(()) }
            arm(after: asked, answer)
            poll.fetched(heldBack: answer.heldBack) { [hints] in hints.yield() }
            return (answer, true)
        }

        /// Asks the gateway to make the fetch that follows `answer` when its
        /// zone next changes: the same request from the answer's token, with
        /// the history's head as the mark (what the bridge asks next after a
        /// whole page). Not after a partial page, a page held back or a history
        /// that does not keep the mark: the bridge asks something else then.
        private func arm(after asked: GatewayWire.Prefetch, _ answer: GatewayWire.Batch) {
            var next = asked
            next.fetch.token = answer.token
            if asked.fetch.history != nil {
                guard let history = answer.history, history.keepsMark else { return }
                next.fetch.history = GatewayWire.HistoryRequest(mark: history.head)
            }
            guard !answer.moreComing, !answer.heldBack else { return }
            // Sent again after every fetch: the gateway makes a prefetch once.
            armed.withLock { $0[next.fetch.zone] = (next, false) }
            zonesChanged.yield(())
        }

        public func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> {
            guard !records.isEmpty else { return [] }
            let tagged = records.map { GatewayWire.Tagged(id: $0.key, tag: $0.value) }
            return Set(
                try await transport.call(
                    .POST, "/forgotten", json: tagged, as: [CloudRecordID].self, doing: "check records the listing lacks"))
        }

        public func missingAssets(_ hashes: [String]) async throws -> Set<String> {
            guard !hashes.isEmpty else { return [] }
            return Set(try await transport.call(.POST, "/assets/missing", json: hashes, as: [String].self, doing: "look for assets"))
        }

        public func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws {
            _ = try await transport.send(
                .PUT, "/assets/\(asset.hash)?size=\(asset.size)", body: bytes, contentType: "application/octet-stream",
                doing: "upload an asset")
        }

        public func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] {
            try await transport.send(
                .GET, "/assets/\(asset.hash)?size=\(asset.size)", body: nil, contentType: "", doing: "download an asset")
        }

        public func share(_ zone: String, with user: String, access: CloudShareAccess?) async throws {
            _ = try await transport.call(
                .POST, "/share", json: GatewayWire.ShareRequest(zone: zone, user: user, access: access), as: [String: String].self,
                doing: "share a zone")
        }

        public func shares() async throws -> [CloudShare] {
            try await transport.call(.GET, "/shares", json: nil as String?, as: [CloudShare].self, doing: "list shares")
        }

        /// `/v1/report`; a gateway of an older build, which keeps no fleet
        /// view, takes it and keeps nothing.
        public func report(_ report: CloudHostReport) async throws {
            do {
                _ = try await transport.callIfRouted(.POST, "/report", json: report, as: [String: String].self, doing: "report this host")
            } catch is GatewayTransport.RouteMissing {}
        }
    }
#endif  // Gateway
