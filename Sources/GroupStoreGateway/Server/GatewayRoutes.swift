#if Gateway
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import HTTPTypes
    import Hummingbird
    import NIOCore

    /// The gateway's endpoints (``GatewayWire``). The API's routes live in
    /// a group whose context is ``AuthenticatedContext``, behind the API's
    /// middleware (``GatewayRequestContext`` shows the stack): no route of it
    /// can be reached without a verified identity, a rate-limited request, a
    /// body within the limits and a deadline, whoever writes the route. A
    /// route decodes its body, runs its operation through
    /// ``AuthenticatedContext/database(_:_:)`` and answers JSON; a failure is
    /// answered by ``GatewayAnswerMiddleware``.
    struct GatewayRoutes {
        let server: GatewayServer

        func router() -> Router<GatewayRequestContext> {
            let router = Router(context: GatewayRequestContext.self)
            router.get("/health") { _, _ in Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "ok\n"))) }
            router.get("/ready") { [backend = server.backend] _, _ in
                let ready = await backend.isReady()
                return Response(
                    status: ready ? .ok : .serviceUnavailable,
                    body: ResponseBody(byteBuffer: ByteBuffer(string: ready ? "ready\n" : "not ready: the database is not reachable\n")))
            }
            addOperations(to: api(on: router))
            return router
        }

        /// The group of the API's routes on `router`, behind its middleware.
        func api(on router: Router<GatewayRequestContext>) -> RouterGroup<AuthenticatedContext> {
            let configuration = server.configuration
            return router.group(RouterPath(GatewayWire.apiPrefix))
                .add(middleware: GatewayAnswerMiddleware(metrics: server.metrics))
                .add(middleware: AuthenticationMiddleware(authenticator: server.authenticator))
                .add(middleware: RateLimitMiddleware(limiter: server.limiter, metrics: server.metrics))
                .add(
                    middleware: BodyLimitMiddleware(
                        maxBytes: configuration.maxBodyBytes, budget: server.bodies, timeout: configuration.requestTimeout,
                        metrics: server.metrics)
                )
                .add(
                    middleware: DeadlineMiddleware(
                        seconds: configuration.requestTimeout, grace: configuration.unansweredGrace, backend: server.backend)
                )
                .group(context: AuthenticatedContext.self)
        }

        /// The remote's operations.
        private func addOperations(to api: RouterGroup<AuthenticatedContext>) {
            api.post("account") { _, context in
                json(try await context.database("account") { GatewayWire.Account(user: try await $0.account()) })
            }
            api.post("history") { _, context in
                let asked = try decode(GatewayWire.HistoryRequest.self, context)
                return json(try await context.database("history") { GatewayWire.History(try await $0.history(keeping: asked.mark)) })
            }
            api.post("prepare") { _, context in
                let types = try decode([CloudRecordType].self, context)
                try await context.database("prepare") { try await $0.prepare(types) }
                return json([String: String]())
            }
            let memory = server.fetchMemory
            api.post("modify") { _, context in
                let changes = try decode([GatewayWire.Change].self, context).map(\.change)
                defer { memory.wrote(changes.map(\.id.zone)) }
                return json(try await context.database("modify") { try await $0.modify(changes).map(GatewayWire.Result.init) })
            }
            api.post("modify-checked") { _, context in
                let asked = try decode(GatewayWire.ModifyRequest.self, context)
                let changes = asked.changes.map(\.change)
                defer { memory.wrote(changes.map(\.id.zone)) }
                return json(
                    try await context.database("modify") { database in
                        let answer = try await database.modify(changes, keeping: asked.mark)
                        return GatewayWire.ModifyAnswer(
                            results: answer.value?.map(GatewayWire.Result.init), history: GatewayWire.History(answer.history))
                    })
            }
            let fetch = server.fetch
            api.post("fetch") { _, context in
                let asked = try decode(GatewayWire.FetchRequest.self, context)
                return json(try await fetch.answer(.init(fetch: asked, subscription: nil), context))
            }
            api.post("fetch-subscribed") { _, context in
                let asked = try decode(GatewayWire.SubscribedFetchRequest.self, context)
                return json(try await fetch.answer(.init(fetch: asked.fetch, subscription: asked.subscription), context))
            }
            api.post("select") { _, context in
                let asked = try decode(GatewayWire.SelectRequest.self, context)
                let identity = context.identity
                let (subscription, claims) = (try asked.subscription.parsed().restricted(by: identity.restrictions), identity.claims)
                return json(
                    try await context.database("select") { database in
                        Array(try await database.selected(asked.ids, subscription: subscription, claims: claims))
                    })
            }
            api.post("forgotten") { _, context in
                let tagged = try decode([GatewayWire.Tagged].self, context)
                let records = Dictionary(tagged.map { ($0.id, $0.tag) }) { first, _ in first }
                return json(try await context.database("forgotten") { Array(try await $0.forgotten(records)) })
            }
            api.post("assets/missing") { _, context in
                let hashes = try decode([String].self, context)
                return json(try await context.database("assets-missing") { Array(try await $0.missingAssets(hashes)).sorted() })
            }
            api.put("assets/:hash") { request, context in
                let bytes = context.bytes
                let asset = CloudAsset(
                    hash: context.parameters.get("hash") ?? "", size: request.uri.queryParameters.get("size", as: Int.self) ?? bytes.count)
                try await context.database("asset-upload") { try await $0.uploadAsset(asset, bytes: bytes) }
                return json([String: String]())
            }
            api.get("assets/:hash") { request, context in
                let asset = CloudAsset(
                    hash: context.parameters.get("hash") ?? "", size: request.uri.queryParameters.get("size", as: Int.self) ?? 0)
                let bytes = try await context.database("asset-download") { try await $0.downloadAsset(asset) }
                return Response(
                    status: .ok, headers: [.contentType: "application/octet-stream"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
            }
            api.post("share") { _, context in
                let share = try decode(GatewayWire.ShareRequest.self, context)
                try await context.database("share") { try await $0.share(share.zone, with: share.user, access: share.access) }
                return json([String: String]())
            }
            api.get("shares") { _, context in
                json(try await context.database("shares") { try await $0.shares() })
            }
            api.post("report") { [reports = server.reports] _, context in
                let report = try decode(CloudHostReport.self, context)
                if let refusal = report.refusal { throw CloudSyncError(.invalidConfiguration, refusal) }
                try await reports.take(report, from: context.identity)
                return json([String: String]())
            }
            // The push connection's upgrade is taken before routing; a request that reaches
            // the router here was not upgraded: say why.
            api.get("push") { _, _ -> Response in
                throw CloudSyncError(.invalidConfiguration, "/v1/push takes a WebSocket upgrade")
            }
        }

        private func json(_ value: some Encodable) -> Response { GatewayAnswer.json(value) }

        private func decode<T: Decodable>(_ type: T.Type, _ context: AuthenticatedContext) throws -> T {
            do {
                return try GatewayWire.decode(type, from: Data(context.bytes))
            } catch {
                throw CloudSyncError(.invalidConfiguration, "the request's body is not what this endpoint takes: \(error)")
            }
        }

        /// The client's origin header, if it is one (1 to 64 of `A-Z a-z 0-9 -`).
        static func origin(_ headers: HTTPFields) -> String? {
            guard let name = HTTPField.Name(GatewayWire.originHeader), let value = headers[name], !value.isEmpty, value.utf8.count <= 64,
                value.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-") })
            else { return nil }
            return value
        }
    }
#endif  // Gateway
