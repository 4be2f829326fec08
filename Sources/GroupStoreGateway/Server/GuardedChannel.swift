#if Gateway
    import GroupStoreCloudPostgres
    import HummingbirdCore
    import Logging
    import NIOCore

    /// The gateway's HTTP child channel, guarded: each accepted connection is
    /// admitted by the ``ConnectionCap`` (or closed), gets a
    /// ``HeaderReadTimeoutHandler`` before the HTTP handlers of `base` (after
    /// TLS, when the channel is wrapped in it), and a ``BadRequestHandler``
    /// after them.
    ///
    /// ```
    /// socket ─ [TLS] ─ HeaderReadTimeout ─ HTTP encoder/decoder ─ upgrade ─ BadRequest ─ (Hummingbird)
    /// ```
    struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
        typealias Value = Base.Value

        let base: Base
        let cap: ConnectionCap
        let headerTimeout: TimeAmount
        let metrics: GatewayMetrics

        func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
            let refused: Bool
            switch cap.admit(channel) {
            case .admitted:
                refused = false
            case .admittedClosing(let longest):
                metrics.refused("connections")
                longest.close(promise: nil)
                refused = false
            case .refused:
                metrics.refused("connections")
                refused = true
            }
            if !refused {
                channel.closeFuture.whenComplete { [cap, metrics] _ in
                    cap.closed(channel)
                    metrics.connections(cap.count)
                }
            }
            metrics.connections(cap.count)
            let guardHandler = HeaderReadTimeoutHandler(timeout: headerTimeout, cap: cap, refused: refused, metrics: metrics)
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(guardHandler)
            }.flatMap {
                base.setup(channel: channel, logger: logger)
            }.flatMapThrowing { value in
                try channel.pipeline.syncOperations.addHandler(BadRequestHandler(metrics: metrics))
                return value
            }
        }

        /// Serves the connection on its event loop (`EventLoopExecutor`): its
        /// bytes arrive there, its database connections are of that loop
        /// (``PostgresGatewayBackend``), and its answers are written there.
        ///
        /// The gateway's handlers never block (no file or socket I/O of their
        /// own, only short locks), as work on an event loop must not. Work that
        /// grows with a request goes to the global pool: the request of a body
        /// past ``BodyLimitMiddleware/largeBody``, and a prefetched page past
        /// ``PushHub/encodedOnTheLoop`` records, encoded whole; their database
        /// calls still run on the loop (``Deadline``). An answer to a request
        /// is encoded on the loop (a page is as large as the limit its client asked for).
        ///
        /// Hummingbird logs a connection that ended before its first request
        /// at error level ("Error handling upgrade result"): these guards close
        /// such connections on purpose (at the cap, at the header timeout,
        /// after a 400), and under attack that would be a line a connection.
        /// They count them in `groupstore_gateway_refused_total` instead, so
        /// the connection's own logger says only what is critical.
        func handle(value: Value, logger: Logger) async {
            var quiet = logger
            quiet.logLevel = .critical
            await EventLoopExecutor.run(on: value.channel.eventLoop) { await base.handle(value: value, logger: quiet) }
        }
    }
#endif  // Gateway
