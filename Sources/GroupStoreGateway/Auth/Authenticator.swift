#if Gateway
    import Foundation
    import GroupStoreCloud
    import HTTPTypes
    import Hummingbird

    /// Who a request comes from: the `Authorization: Bearer` header's token,
    /// verified (``TokenVerifier``, once while it is valid: ``VerifiedTokens``),
    /// naming a role the gateway may act as.
    /// Used by ``AuthenticationMiddleware`` for the API and by the push
    /// connection's upgrade, so both refuse the same tokens with the same sentence.
    struct Authenticator: Sendable {
        let tokens: VerifiedTokens

        init(verifier: TokenVerifier) { tokens = VerifiedTokens(verifier: verifier) }

        /// Roles no token may name, whatever the database says of them: the
        /// group role of the users (granted to every user, so the authenticator
        /// may become it too), the gateway's own group, and PostgreSQL's
        /// predefined roles (`pg_…`).
        static let reservedRoles: Set<String> = ["groupstore_user", "groupstore_gateway"]

        /// The identity the header's token proves.
        /// - Throws: ``GatewayError/Code/unauthenticated`` (401) for a missing
        ///   or refused token, saying why in one line;
        ///   `CloudSyncError` ``CloudSyncError/Code/unauthorized`` (403) for a
        ///   reserved role.
        func identity(_ headers: HTTPFields) throws -> GatewayIdentity {
            guard let value = headers[.authorization] else {
                throw GatewayError(.unauthenticated, "no token: send Authorization: Bearer TOKEN")
            }
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw GatewayError(.unauthenticated, "the Authorization header is not Bearer TOKEN")
            }
            let identity = try tokens.identity(String(parts[1]).trimmingCharacters(in: .whitespaces))
            if let refusal = Self.refusal(of: identity.role) { throw refusal }
            return identity
        }

        /// Why the gateway never acts as `role`, if it is reserved.
        static func refusal(of role: String) -> CloudSyncError? {
            if reservedRoles.contains(role) {
                let what =
                    role == "groupstore_user" ? "the group role of the users, not a user" : "the gateway's own group role, not a user"
                return CloudSyncError(.unauthorized, "the gateway may not act as role \(String(reflecting: role)): it is \(what)")
            }
            if role.hasPrefix("pg_") {
                return CloudSyncError(
                    .unauthorized, "the gateway may not act as role \(String(reflecting: role)): pg_ roles are PostgreSQL's own")
            }
            return nil
        }
    }

    /// Sets who the request comes from: its verified identity
    /// (``GatewayRequestContext/identity``) from its bearer token
    /// (``Authenticator``), or refuses it (401 with the reason for a missing or
    /// refused token, 403 for a reserved role); and its client's origin.
    struct AuthenticationMiddleware: RouterMiddleware {
        typealias Context = GatewayRequestContext
        let authenticator: Authenticator

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            var context = context
            context.identity = try authenticator.identity(request.headers)
            context.origin = GatewayRoutes.origin(request.headers)
            return try await next(request, context)
        }
    }
#endif  // Gateway
