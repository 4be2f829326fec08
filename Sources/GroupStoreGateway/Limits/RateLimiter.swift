#if Gateway
    import Foundation
    import GroupStoreCloud
    import Hummingbird
    import Synchronization

    #if canImport(Glibc)
        import Glibc
    #endif

    /// A token bucket per identity (``GatewayIdentity/key``): each request (and
    /// each push subscription) takes one; a bucket refills at `rate` a second
    /// up to `burst`. Buckets unused for a minute are dropped.
    final class RateLimiter: Sendable {
        private struct Bucket {
            var level: Double
            var at: Double
        }

        private let rate: Double
        private let burst: Double
        private let buckets = Mutex<(entries: [String: Bucket], swept: Double)>(([:], 0))

        init(rate: Double, burst: Double) {
            self.rate = max(rate, 0.001)
            self.burst = max(burst, 1)
        }

        /// `nil` when the request may go; otherwise how many seconds to wait.
        func take(_ key: String, now: Double = RateLimiter.now()) -> Double? {
            buckets.withLock { state in
                if now - state.swept > 60 {
                    state.entries = state.entries.filter { now - $0.value.at < 60 }
                    state.swept = now
                }
                var bucket = state.entries[key] ?? Bucket(level: burst, at: now)
                bucket.level = min(burst, bucket.level + (now - bucket.at) * rate)
                bucket.at = now
                defer { state.entries[key] = bucket }
                guard bucket.level >= 1 else { return (1 - bucket.level) / rate }
                bucket.level -= 1
                return nil
            }
        }

        static func now() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
    }

    /// Takes one from the bucket of the request's verified identity
    /// (``GatewayIdentity/key``, the role): past the rate, 429 with
    /// `Retry-After`, which the bridge honours. A push connection's
    /// `subscribe` frames take from the same bucket (``PushHub``).
    struct RateLimitMiddleware: RouterMiddleware {
        typealias Context = GatewayRequestContext
        let limiter: RateLimiter
        let metrics: GatewayMetrics

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            guard let identity = context.identity else {
                throw GatewayError(.unauthenticated, "no token: send Authorization: Bearer TOKEN")
            }
            if let refusal = Self.refusal(limiter.take(identity.key), identity: identity, what: "requests") {
                metrics.refused("rate")
                throw refusal
            }
            return try await next(request, context)
        }

        /// The error for a wait the limiter asked for (`nil`: none).
        static func refusal(_ wait: Double?, identity: GatewayIdentity, what: String) -> CloudSyncError? {
            guard let wait else { return nil }
            return CloudSyncError(
                .rateLimited, "too many \(what) for \(identity.described): wait \(String(format: "%.2f", wait)) s",
                retryAfter: wait)
        }
    }
#endif  // Gateway
