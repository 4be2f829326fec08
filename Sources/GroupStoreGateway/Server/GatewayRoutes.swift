#if Gateway
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import HTTPTypes
    import Hummingbird
    import NIOCore

    /// The gateway's endpoints (``GatewayWire``): each authenticates its
    /// token, takes from the token's rate bucket, reads a body of bounded size,
    /// runs the operation as the token's role within the request timeout, and
    /// answers JSON, or the error's code and line with its status.
    struct GatewayRoutes {
        let server: GatewayServer

        func router() -> Router<BasicRequestContext> {
            let router = Router(context: BasicRequestContext.self)
            router.get("/health") { _, _ in Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "ok\n"))) }
            router.get("/ready") { _, _ in
                let ready = await server.backend.isReady()
                return Response(
                    status: ready ? .ok : .serviceUnavailable,
                    body: ResponseBody(byteBuffer: ByteBuffer(string: ready ? "ready\n" : "not ready: the database is not reachable\n")))
            }
            let api = router.group(RouterPath(GatewayWire.apiPrefix))
            api.post("account") { request, _ in
                try await handle(request, "account") { database, _ in
                    GatewayWire.Account(user: try await database.account())
                }
            }
            api.post("history") { request, _ in
                try await handle(request, "history") { database, body in
                    let asked = try decode(GatewayWire.HistoryRequest.self, body)
                    return GatewayWire.History(try await database.history(keeping: asked.mark))
                }
            }
            api.post("prepare") { request, _ in
                try await handle(request, "prepare") { database, body in
                    try await database.prepare(try decode([CloudRecordType].self, body))
                    return [String: String]()
                }
            }
            api.post("modify") { request, _ in
                try await handle(request, "modify") { database, body in
                    let changes = try decode([GatewayWire.Change].self, body).map(\.change)
                    return try await database.modify(changes).map(GatewayWire.Result.init)
                }
            }
            api.post("modify-checked") { request, _ in
                try await handle(request, "modify") { database, body in
                    let asked = try decode(GatewayWire.ModifyRequest.self, body)
                    let answer = try await database.modify(asked.changes.map(\.change), keeping: asked.mark)
                    return GatewayWire.ModifyAnswer(
                        results: answer.value?.map(GatewayWire.Result.init), history: GatewayWire.History(answer.history))
                }
            }
            api.post("fetch") { request, _ in
                try await handle(request, "fetch") { database, body in
                    let asked = try decode(GatewayWire.FetchRequest.self, body)
                    guard let history = asked.history else {
                        let (batch, heldBack) = try await database.fetchChanges(in: asked.zone, since: asked.token, limit: asked.limit)
                        return GatewayWire.Batch(batch, heldBack: heldBack)
                    }
                    let (answer, heldBack) = try await database.fetchChanges(
                        in: asked.zone, since: asked.token, limit: asked.limit, keeping: history.mark)
                    let page = answer.value ?? CloudChangeBatch(changed: [], deleted: [], token: asked.token ?? CloudChangeToken(""), moreComing: false)
                    return GatewayWire.Batch(page, heldBack: heldBack, history: GatewayWire.History(answer.history))
                }
            }
            api.post("forgotten") { request, _ in
                try await handle(request, "forgotten") { database, body in
                    let tagged = try decode([GatewayWire.Tagged].self, body)
                    return Array(try await database.forgotten(Dictionary(tagged.map { ($0.id, $0.tag) }) { first, _ in first }))
                }
            }
            api.post("assets/missing") { request, _ in
                try await handle(request, "assets-missing") { database, body in
                    Array(try await database.missingAssets(try decode([String].self, body))).sorted()
                }
            }
            api.put("assets/:hash") { request, context in
                let hash = context.parameters.get("hash") ?? ""
                let size = request.uri.queryParameters.get("size", as: Int.self)
                return try await handle(request, "asset-upload") { database, body in
                    try await database.uploadAsset(CloudAsset(hash: hash, size: size ?? body.count), bytes: body)
                    return [String: String]()
                }
            }
            api.get("assets/:hash") { request, context in
                let hash = context.parameters.get("hash") ?? ""
                let size = request.uri.queryParameters.get("size", as: Int.self) ?? 0
                return try await respond(request, "asset-download") { database, _ in
                    let bytes = try await database.downloadAsset(CloudAsset(hash: hash, size: size))
                    return Response(
                        status: .ok, headers: [.contentType: "application/octet-stream"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
                }
            }
            api.post("share") { request, _ in
                try await handle(request, "share") { database, body in
                    let share = try decode(GatewayWire.ShareRequest.self, body)
                    try await database.share(share.zone, with: share.user, access: share.access)
                    return [String: String]()
                }
            }
            api.get("shares") { request, _ in
                try await handle(request, "shares") { database, _ in try await database.shares() }
            }
            // The push connection's upgrade is taken before routing; a request that reaches
            // the router here was not upgraded: say why.
            api.get("push") { request, _ in
                try await respond(request, "push") { _, _ in
                    throw CloudSyncError(.invalidConfiguration, "/v1/push takes a WebSocket upgrade")
                }
            }
            return router
        }

        /// ``respond(_:_:_:)`` answering `body`'s value as JSON.
        private func handle<Answer: Encodable & Sendable>(
            _ request: Request, _ operation: String,
            _ body: @escaping @Sendable (any GatewayRoleDatabase, [UInt8]) async throws -> Answer
        ) async throws -> Response {
            try await respond(request, operation) { database, bytes in
                let answer = try await body(database, bytes)
                return GatewayAnswer.json(answer)
            }
        }

        /// Authenticates, limits, reads the body and runs `body` as the token's
        /// role; any failure becomes its status and ``GatewayWire/ErrorBody``.
        private func respond(
            _ request: Request, _ operation: String,
            _ body: @escaping @Sendable (any GatewayRoleDatabase, [UInt8]) async throws -> Response
        ) async throws -> Response {
            let started = DispatchTime.now().uptimeNanoseconds
            let response: Response
            do {
                response = try await run(request, operation, body)
            } catch {
                response = GatewayAnswer.failure(error, metrics: server.metrics)
            }
            let elapsed = Int64(DispatchTime.now().uptimeNanoseconds - started)
            server.metrics.request(operation, status: response.status.code, nanoseconds: elapsed)
            return response
        }

        private func run(
            _ request: Request, _ operation: String,
            _ body: @escaping @Sendable (any GatewayRoleDatabase, [UInt8]) async throws -> Response
        ) async throws -> Response {
            let identity = try server.authenticate(request.headers)
            if let wait = server.limiter.take(identity.bucket) {
                server.metrics.refused("rate")
                throw CloudSyncError(
                    .rateLimited, "too many requests for this token: wait \(String(format: "%.2f", wait)) s", retryAfter: wait)
            }
            let limit = server.configuration.maxBodyBytes
            if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
                server.metrics.refused("size")
                throw CloudSyncError(.batchTooLarge, "the request has \(length) bytes; this gateway takes at most \(limit)")
            }
            var request = request
            let bytes: [UInt8]
            do {
                var buffer = try await request.collectBody(upTo: limit)
                bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
            } catch {
                guard error is NIOTooManyBytesError || (error as? any HTTPResponseError)?.status == .contentTooLarge else { throw error }
                server.metrics.refused("size")
                throw CloudSyncError(.batchTooLarge, "the request has more than the \(limit) bytes this gateway takes")
            }
            let database = server.backend.acting(as: identity.role, origin: Self.origin(request.headers))
            return try await Deadline.run(seconds: server.configuration.requestTimeout, operation) {
                try await body(database, bytes)
            }
        }

        private func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws -> T {
            do {
                return try GatewayWire.decode(type, from: Data(body))
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
