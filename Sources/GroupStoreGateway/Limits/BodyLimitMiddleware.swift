#if Gateway
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import Synchronization

    /// Reads the request's body into ``GatewayRequestContext/body`` within
    /// three limits:
    ///
    /// - its size: more than ``GatewayConfiguration/maxBodyBytes``, 413
    ///   (by its `Content-Length` before reading anything, or while reading);
    /// - the memory of all bodies at once (``BodyBudget``): the request
    ///   reserves its `Content-Length` (the size limit when it sends none)
    ///   before reading, and gives it back once answered; no room, 503 with
    ///   `Retry-After` (the bridge tries again);
    /// - its time: a body that has not arrived within the request timeout is
    ///   a 503, and the connection is closed.
    struct BodyLimitMiddleware: RouterMiddleware {
        typealias Context = GatewayRequestContext
        let maxBytes: Int
        let budget: BodyBudget
        let timeout: Double
        let metrics: GatewayMetrics

        /// Bytes of a body past which its request is served on Swift's global pool rather than its connection's event loop.
        static let largeBody = 64 * 1024

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            let length = request.headers[.contentLength].flatMap { Int($0) }
            if let length, length > maxBytes {
                metrics.refused("size")
                throw CloudSyncError(.batchTooLarge, "the request has \(length) bytes; this gateway takes at most \(maxBytes)")
            }
            // Without a length, a body comes only chunked (HTTP/1.1): it may hold up to the limit.
            let reserved = length ?? (request.headers[.transferEncoding] == nil ? 0 : maxBytes)
            guard budget.reserve(reserved) else {
                metrics.refused("memory")
                throw CloudSyncError(
                    .transient, "the gateway holds as many request bodies as it may (\(budget.capacity) bytes) at the moment; try again",
                    retryAfter: 1)
            }
            defer { budget.release(reserved) }
            var context = context
            context.body = reserved == 0 ? ByteBuffer() : try await collect(request)
            // A large body's decoding would hold up the connections of its event loop (EventLoopExecutor).
            guard context.body.readableBytes > Self.largeBody else { return try await next(request, context) }
            return try await withTaskExecutorPreference(globalConcurrentExecutor) { try await next(request, context) }
        }

        /// The body, read within the size limit and the timeout.
        private func collect(_ request: Request) async throws -> ByteBuffer {
            let (maxBytes, timeout) = (maxBytes, timeout)
            do {
                return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
                    group.addTask {
                        var request = request
                        return try await request.collectBody(upTo: maxBytes)
                    }
                    group.addTask {
                        try await LoopSleep.until(.now + .seconds(timeout))
                        return nil
                    }
                    defer { group.cancelAll() }
                    guard let body = try await group.next() ?? nil else {
                        throw CloudSyncError(.transient, "the request's body did not arrive within \(Int(timeout)) s; try again")
                    }
                    return body
                }
            } catch let error where error is NIOTooManyBytesError || (error as? any HTTPResponseError)?.status == .contentTooLarge {
                metrics.refused("size")
                throw CloudSyncError(.batchTooLarge, "the request has more than the \(maxBytes) bytes this gateway takes")
            }
        }
    }

    /// The memory the gateway gives request bodies, all requests together: a
    /// request reserves what its body may hold before reading it, and gives it
    /// back once answered (``BodyLimitMiddleware``), so that many concurrent
    /// uploads wait their turn instead of taking the process's memory.
    final class BodyBudget: Sendable {
        /// The most bytes reserved at once.
        let capacity: Int
        private let reserved = Mutex(0)

        init(capacity: Int) {
            self.capacity = capacity
        }

        /// Reserves `bytes` if they fit beside what is reserved; whether they did.
        func reserve(_ bytes: Int) -> Bool {
            reserved.withLock { reserved in
                guard bytes <= capacity - reserved else { return false }
                reserved += bytes
                return true
            }
        }

        /// Gives back what ``reserve(_:)`` took.
        func release(_ bytes: Int) {
            reserved.withLock { $0 -= bytes }
        }

        /// The bytes reserved now.
        var inUse: Int { reserved.withLock { $0 } }
    }
#endif  // Gateway
