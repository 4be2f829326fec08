#if Gateway
    import NIOCore

    /// The first handler after TLS (or the socket): closes a connection whose
    /// first request head is not complete within the header timeout, counted
    /// from its accept, so a TLS handshake left open, or a request never
    /// finished, holds no connection. It reads raw bytes before the HTTP
    /// decoder, which (with the WebSocket upgrade) has no timeout of its own
    /// until the first head is parsed; once the head's blank line has come,
    /// the connection is ``ConnectionCap/busy(_:)`` and the handler leaves the
    /// pipeline (the idle timeout watches the requests after it).
    ///
    /// A connection the cap refused (``ConnectionCap/Admission/refused``) is
    /// closed as soon as it is active.
    ///
    /// When the gateway stops gracefully, a connection whose first head has
    /// not come has no request to finish, and is closed at once: the HTTP
    /// handlers that close an idle connection then are added only once the
    /// first head came (the WebSocket upgrade decides on it), so without this
    /// such a connection held the gateway's exit until its header timeout
    /// (``GatewayConfiguration/headerTimeout``, from its accept).
    final class HeaderReadTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let timeout: TimeAmount
        private let cap: ConnectionCap
        private let refused: Bool
        private let metrics: GatewayMetrics
        private var timer: Scheduled<Void>?
        private var scanner = HeadScanner()

        init(timeout: TimeAmount, cap: ConnectionCap, refused: Bool, metrics: GatewayMetrics) {
            self.timeout = timeout
            self.cap = cap
            self.refused = refused
            self.metrics = metrics
        }

        func handlerAdded(context: ChannelHandlerContext) {
            if refused {
                if context.channel.isActive { context.close(promise: nil) }
                return
            }
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in expire(context) }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            timer?.cancel()
            timer = nil
        }

        func channelActive(context: ChannelHandlerContext) {
            if refused {
                context.close(promise: nil)
                return
            }
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            timer?.cancel()
            timer = nil
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !refused else { return }
            let complete = scanner.scan(unwrapInboundIn(data))
            context.fireChannelRead(data)
            if complete {
                timer?.cancel()
                timer = nil
                cap.busy(context.channel)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
            context.close(promise: nil)
        }

        /// The first head did not come in time: a 408 if part of a request came, then close.
        private func expire(_ context: ChannelHandlerContext) {
            timer = nil
            guard context.channel.isActive else { return }
            metrics.refused("header-timeout")
            guard scanner.started else {
                context.close(promise: nil)
                return
            }
            let answer = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }

    /// Finds the end of a request head in raw bytes: a blank line (CRLF CRLF,
    /// or bare LFs, as the decoder takes them) after the first byte that is
    /// not a line end (empty lines before a request line are skipped, as the
    /// decoder skips them).
    struct HeadScanner {
        /// Whether a byte of a request line came.
        private(set) var started = false
        /// Whether the last line ended with nothing after it yet.
        private var atLineStart = false

        /// Scans `buffer`; whether the head's blank line is in it (or came before).
        mutating func scan(_ buffer: ByteBuffer) -> Bool {
            for byte in buffer.readableBytesView {
                switch byte {
                case UInt8(ascii: "\n"):
                    guard started else { continue }
                    if atLineStart { return true }
                    atLineStart = true
                case UInt8(ascii: "\r"):
                    continue
                default:
                    started = true
                    atLineStart = false
                }
            }
            return false
        }
    }
#endif  // Gateway
