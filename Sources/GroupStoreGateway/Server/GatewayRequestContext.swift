#if Gateway
    import Foundation
    import GroupStoreCloudHTTP
    import Hummingbird
    import NIOCore

    /// The context of every request the gateway's router serves: what the
    /// middleware of the API (``GatewayRoutes``) learned of it before its route
    /// runs. `/health` and `/ready` take it as it comes (nothing set).
    ///
    /// ```
    /// request ─▶ GatewayAnswerMiddleware (errors → status + ErrorBody; metrics)
    ///         ─▶ AuthenticationMiddleware (sets identity, or 401/403)
    ///         ─▶ RateLimitMiddleware (per identity, or 429)
    ///         ─▶ BodyLimitMiddleware (sets body within the size and memory limits, or 413/503)
    ///         ─▶ DeadlineMiddleware (sets deadline; 503 when it passed and nothing committed)
    ///         ─▶ AuthenticatedContext(context:) ─▶ the route
    /// ```
    struct GatewayRequestContext: RequestContext {
        var coreContext: CoreRequestContextStorage
        /// The verified identity (``AuthenticationMiddleware``).
        var identity: GatewayIdentity?
        /// The request's body, read within the limits (``BodyLimitMiddleware``).
        var body = ByteBuffer()
        /// The client's origin (``AuthenticationMiddleware``).
        var origin: String?
        /// When the request must have been answered, and the database it
        /// bounds (``DeadlineMiddleware``).
        var deadline: RequestDeadline?

        init(source: Source) {
            coreContext = .init(source: source)
        }
    }

    /// The context of the API's routes: a verified identity, by type. A route
    /// of the group made with it (``GatewayRoutes/api(on:)``) cannot be reached
    /// without one: the context cannot be made from a request that has none.
    struct AuthenticatedContext: ChildRequestContext {
        var coreContext: CoreRequestContextStorage
        /// Who the request comes from.
        let identity: GatewayIdentity
        /// The request's body (empty for a request without one).
        let body: ByteBuffer
        /// When the request must have been answered, and the database it bounds.
        let deadline: RequestDeadline
        /// What the request's writes' notifications carry (its `GroupStore-Origin`).
        let origin: String?

        /// - Throws: ``GatewayError/Code/unauthenticated`` when no identity was
        ///   verified (a route reached without the API's middleware).
        init(context: GatewayRequestContext) throws {
            guard let identity = context.identity, let deadline = context.deadline else {
                throw GatewayError(.unauthenticated, "no token: send Authorization: Bearer TOKEN")
            }
            coreContext = context.coreContext
            self.identity = identity
            self.deadline = deadline
            body = context.body
            origin = context.origin
        }

        /// The body's bytes.
        var bytes: [UInt8] { body.getBytes(at: body.readerIndex, length: body.readableBytes) ?? [] }

        /// Runs `body` with the database acting as the request's role, within
        /// its deadline: the one way a route reaches the database.
        func database<T: Sendable>(_ what: String, _ body: @escaping @Sendable (any GatewayRoleDatabase) async throws -> T) async throws
            -> T
        {
            try await deadline.run(what, identity: identity, origin: origin, body)
        }
    }

    extension GatewayRequestContext {
        /// The operation a request of the API is, for metrics and messages
        /// (`modify`, `asset-upload`, …): its route's path after `/v1/`.
        func operation(of request: Request) -> String {
            let prefix = GatewayWire.apiPrefix + "/"
            guard let endpoint = endpointPath, endpoint.hasPrefix(prefix) else { return "other" }
            let path = endpoint.dropFirst(prefix.count)
            switch path {
            case "modify-checked": return "modify"
            case "assets/missing": return "assets-missing"
            case _ where path.hasPrefix("assets/"): return request.method == .put ? "asset-upload" : "asset-download"
            default: return path.replacingOccurrences(of: "/", with: "-")
            }
        }
    }
#endif  // Gateway
