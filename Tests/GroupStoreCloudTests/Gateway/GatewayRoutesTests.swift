#if Gateway
    import Foundation
    import GroupStoreCloud
    import Hummingbird
    import HummingbirdTesting
    import Logging
    import NIOCore
    import XCTest

    @testable import GroupStoreGateway

    /// The API's routes are reached through its middleware only (issue 41,
    /// finding 1): a route added to the API's group, written with no thought
    /// of tokens, is refused without one, by the type of its context.
    final class GatewayRoutesTests: XCTestCase {
        var secret: GatewaySecret!

        override func setUpWithError() throws {
            secret = try GatewaySecret()
        }

        override func tearDownWithError() throws {
            secret.remove()
        }

        func testARouteAddedToTheAPI_isRefused401WithItsSentence_withoutAToken_andReachedWithOne() async throws {
            let server = GatewayServer(
                configuration: GatewayConfiguration(host: "127.0.0.1", port: 0, keys: try GatewayKeys(secretFiles: [secret.path])),
                backend: MemoryGatewayBackend())
            let routes = GatewayRoutes(server: server)
            let router = Router(context: GatewayRequestContext.self)
            // The new route knows nothing of tokens: its context has the identity.
            routes.api(on: router).get("whoami") { _, context in
                Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: context.identity.role)))
            }
            router.get("/health") { _, _ in "ok" }
            let token = try secret.token(role: "alice")
            let expired = try secret.token(role: "alice", expiresIn: 60, now: Date().addingTimeInterval(-3600))
            try await Application(router: router).test(.router) { client in
                try await client.execute(uri: "/v1/whoami", method: .get) { response in
                    XCTAssertEqual(response.status, .unauthorized)
                    XCTAssertTrue(String(buffer: response.body).contains("token refused: no token: send Authorization: Bearer TOKEN"))
                    XCTAssertEqual(response.headers[.wwwAuthenticate], "Bearer error=\"invalid_token\"")
                }
                try await client.execute(uri: "/v1/whoami", method: .get, headers: [.authorization: "Bearer " + expired]) { response in
                    XCTAssertEqual(response.status, .unauthorized)
                    XCTAssertTrue(String(buffer: response.body).contains("token refused: the token expired at"))
                }
                try await client.execute(uri: "/v1/whoami", method: .get, headers: [.authorization: "Bearer " + token]) { response in
                    XCTAssertEqual(response.status, .ok)
                    XCTAssertEqual(String(buffer: response.body), "alice")
                }
                try await client.execute(uri: "/health", method: .get) { response in
                    XCTAssertEqual(response.status, .ok)
                }
            }
        }

        /// Even a route put in an authenticated group without the API's
        /// middleware is not run: its context cannot be made without an
        /// identity, and the refusal is the token's.
        func testARouteWithoutTheMiddleware_isNotRunWithoutAnIdentity() async throws {
            let router = Router(context: GatewayRequestContext.self)
            router.group("/bare").add(middleware: GatewayAnswerMiddleware(metrics: GatewayMetrics()))
                .group(context: AuthenticatedContext.self).get("route") { _, context in context.identity.role }
            try await Application(router: router).test(.router) { client in
                try await client.execute(uri: "/bare/route", method: .get) { response in
                    XCTAssertEqual(response.status, .unauthorized)
                    XCTAssertTrue(String(buffer: response.body).contains("no token"))
                }
            }
        }
    }
#endif  // Gateway
