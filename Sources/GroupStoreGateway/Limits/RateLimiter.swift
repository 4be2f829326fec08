#if Gateway
    import Foundation
    import Synchronization

    #if canImport(Glibc)
        import Glibc
    #endif

    /// A token bucket per token: each request takes one; a bucket refills at
    /// `rate` a second up to `burst`. Buckets unused for a minute are dropped.
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
#endif  // Gateway
