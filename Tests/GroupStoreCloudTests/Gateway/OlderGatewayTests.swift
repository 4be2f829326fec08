#if Gateway
    import AsyncHTTPClient
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import Synchronization
    import XCTest

    /// A client behind gateways of mixed builds (the review's R4): its fetches
    /// reach a gateway that checks the history in the call, and so it sends
    /// its uploads to `/modify-checked`; an upload that reaches a gateway of an
    /// older build, which has no such route, is checked apart and lands.
    final class OlderGatewayTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .memoryGateway }

        static let note = CloudRecordType(
            name: "note", scope: .private,
            columns: [
                CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
                CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
            ])

        func testAnUploadReachingAGatewayWithoutModifyChecked_isCheckedApart_andLands() async throws {
            let older = try await OlderGatewayProxy.start(forwardingTo: gatewayPorts[0])
            let remote = try GatewayRemote(
                GatewayRemote.Configuration(url: "http://127.0.0.1:\(older.port)", token: try gatewaySecret.token(role: "alice")))
            let zone = CloudZone.private("alice")
            func save(_ name: String) -> CloudRecordChange {
                .save(
                    id: CloudRecordID(zone: zone, type: "note", name: name), baseTag: nil, fields: ["title": .text(name)], editedAt: Date())
            }
            try await remote.prepare([Self.note])
            // The fetch is served by the gateway behind: it checks the history, and says so.
            let listed = try await remote.fetchChanges(in: zone, since: nil, limit: 100, keeping: nil)
            XCTAssertNotNil(listed.value)

            let first = try await remote.modify([save("n1")], keeping: listed.history.head)
            guard case .saved = first.value?.first else { return XCTFail("n1 was not saved: \(String(describing: first.value))") }
            XCTAssertEqual(older.refused, 1, "the upload met the older build's 404 once, and was checked apart")
            XCTAssertGreaterThan(first.history.head.position, listed.history.head.position, "the head after the upload is past it")

            let second = try await remote.modify([save("n2")], keeping: first.history.head)
            guard case .saved = second.value?.first else { return XCTFail("n2 was not saved: \(String(describing: second.value))") }
            XCTAssertEqual(older.refused, 1, "known since: the next upload is checked apart at once")

            let fetched = try await remote.fetchChanges(in: zone, since: nil, limit: 100, keeping: second.history.head)
            XCTAssertEqual(fetched.value?.changed.map(\.id.name).sorted(), ["n1", "n2"])
            try await older.stop()
        }

        /// A client's first call an upload: sent to `/modify-checked` (one
        /// request), not asked apart, until a gateway says it has no such route.
        func testAFirstUpload_goesToModifyChecked_andFromAnOlderBuildIsCheckedApart() async throws {
            let older = try await OlderGatewayProxy.start(forwardingTo: gatewayPorts[0])
            let token = try gatewaySecret.token(role: "alice")
            let zone = CloudZone.private("alice")
            let setup = try GatewayRemote(GatewayRemote.Configuration(url: "http://127.0.0.1:\(gatewayPorts[0])", token: token))
            try await setup.prepare([Self.note])
            let mark = try await setup.history(keeping: nil).head
            let remote = try GatewayRemote(GatewayRemote.Configuration(url: "http://127.0.0.1:\(older.port)", token: token))
            let save = CloudRecordChange.save(
                id: CloudRecordID(zone: zone, type: "note", name: "first"), baseTag: nil, fields: ["title": .text("first")],
                editedAt: Date())
            let answer = try await remote.modify([save], keeping: mark)
            guard case .saved = answer.value?.first else {
                return XCTFail("the first upload was not saved: \(String(describing: answer.value))")
            }
            XCTAssertEqual(older.refused, 1, "the first upload went to /modify-checked before anything was known of the gateway")
            try await older.stop()
        }
    }

    /// A gateway of an older build in front of a real one: it has no
    /// `/v1/modify-checked` (answered 404 with an empty body, as Hummingbird
    /// answers a route it lacks) and forwards every other request.
    final class OlderGatewayProxy: Sendable {
        let port: Int
        private let channel: any Channel
        private let refusals: Refusals

        /// How many requests it answered 404.
        var refused: Int { refusals.count.withLock { $0 } }

        final class Refusals: Sendable {
            let count = Mutex(0)
        }

        private init(port: Int, channel: any Channel, refusals: Refusals) {
            self.port = port
            self.channel = channel
            self.refusals = refusals
        }

        static func start(forwardingTo target: Int) async throws -> OlderGatewayProxy {
            let refusals = Refusals()
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    do {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(ProxyHandler(target: target, refusals: refusals))
                        return channel.eventLoop.makeSucceededVoidFuture()
                    } catch {
                        return channel.eventLoop.makeFailedFuture(error)
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            guard let port = channel.localAddress?.port else { throw CloudSyncError(.badRemote, "the proxy has no port") }
            return OlderGatewayProxy(port: port, channel: channel, refusals: refusals)
        }

        func stop() async throws { try await channel.close() }

        /// One connection's requests, each answered in turn.
        private final class ProxyHandler: ChannelInboundHandler {
            typealias InboundIn = HTTPServerRequestPart
            typealias OutboundOut = HTTPServerResponsePart
            let target: Int
            let refusals: Refusals
            private var head: HTTPRequestHead?
            private var body: ByteBuffer?

            init(target: Int, refusals: Refusals) {
                self.target = target
                self.refusals = refusals
            }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                switch unwrapInboundIn(data) {
                case .head(let head):
                    self.head = head
                    body = nil
                case .body(var part):
                    if body == nil { body = part } else { body!.writeBuffer(&part) }
                case .end:
                    guard let head else { return }
                    self.head = nil
                    if head.uri.hasPrefix("/v1/modify-checked") {
                        refusals.count.withLock { $0 += 1 }
                        respond(context, status: .notFound, headers: [:], body: nil)
                        return
                    }
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(target)\(head.uri)")
                    request.method = head.method
                    for (name, value) in head.headers where name.lowercased() != "host" { request.headers.add(name: name, value: value) }
                    if let body { request.body = .bytes(body) }
                    let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                    let eventLoop = context.eventLoop
                    Task {
                        let answer: (HTTPResponseStatus, HTTPHeaders, ByteBuffer)
                        do {
                            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                            answer = (response.status, response.headers, try await response.body.collect(upTo: 64 << 20))
                        } catch {
                            answer = (.badGateway, [:], ByteBuffer())
                        }
                        eventLoop.execute {
                            let (handler, context) = bound.value
                            handler.respond(context, status: answer.0, headers: answer.1, body: answer.2)
                        }
                    }
                }
            }

            private func respond(_ context: ChannelHandlerContext, status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer?) {
                var headers = headers
                for name in ["transfer-encoding", "content-length", "connection"] { headers.remove(name: name) }
                headers.add(name: "content-length", value: "\(body?.readableBytes ?? 0)")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
                if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
#endif  // Gateway
