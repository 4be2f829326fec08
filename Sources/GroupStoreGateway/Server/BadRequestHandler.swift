#if Gateway
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import NIOCore
    import NIOHTTP1

    /// Answers a first request the HTTP decoder cannot read (a garbage request
    /// line, a head over the decoder's 80 KB, `Content-Length` beside
    /// `Transfer-Encoding`, …) with 400 and `Connection: close`, then closes
    /// the connection; any other failure before the first request closes it.
    ///
    /// It sits after the WebSocket upgrade handler, where the decoder's errors
    /// arrive before Hummingbird has a channel of its own to answer them (NIO's
    /// own error handling is off in that pipeline); once the first request
    /// passes, Hummingbird answers parse errors itself and the handler leaves.
    final class BadRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let metrics: GatewayMetrics
        private var answered = false

        init(metrics: GatewayMetrics) {
            self.metrics = metrics
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            guard !answered else { return }
            answered = true
            guard let error = error as? HTTPParserError else {
                context.close(promise: nil)
                return
            }
            metrics.refused("parse")
            let body = GatewayWire.ErrorBody(
                code: CloudSyncError.Code.invalidConfiguration.rawValue,
                message: "the request is not HTTP/1.1 this gateway reads: \(Self.reason(error))")
            let bytes = ByteBuffer(bytes: (try? GatewayWire.encode(body)) ?? Data())
            let head = HTTPResponseHead(
                version: .http1_1, status: .badRequest,
                headers: ["Connection": "close", "Content-Type": "application/json", "Content-Length": String(bytes.readableBytes)])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }

        /// What is wrong with the request, in a few words.
        static func reason(_ error: HTTPParserError) -> String {
            switch error {
            case .headerOverflow: return "its head is over the 80 KB the gateway reads"
            case .invalidMethod, .invalidURL, .invalidVersion: return "its request line is not one (\(error))"
            case .invalidHeaderToken, .lfExpected, .invalidCharactersUsed, .invalidConstant:
                return "a line of its head is malformed (\(error))"
            case .invalidContentLength, .unexpectedContentLength, .invalidChunkSize:
                return "its length is not one (\(error))"
            case .unknown: return "its head or its framing (Content-Length, Transfer-Encoding) cannot be read"
            default: return "\(error)"
            }
        }
    }
#endif  // Gateway
