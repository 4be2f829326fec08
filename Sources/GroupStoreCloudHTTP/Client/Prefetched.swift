#if Gateway
    import GroupStoreCloud
    import Synchronization

    /// The pages a gateway sent with its hints, each the answer to a fetch
    /// this client asked it to make (``GatewayWire/Prefetch``): taken once, by
    /// a fetch asked exactly so, instead of a request.
    ///
    /// A page was read after the change its hint tells of; a later hint of
    /// its zone (a change after the read), the client's own write in it, or
    /// a new push connection drops it, so a fetch it answers sees what a
    /// request would have. A page is kept ``lifetime`` seconds at most.
    final class Prefetched: Sendable {
        private struct Page {
            let asked: GatewayWire.Prefetch
            let answer: GatewayWire.Batch
            let at: ContinuousClock.Instant
        }

        /// How long a page may wait for its fetch, in seconds.
        static let lifetime: Double = 60

        private let pages = Mutex<[CloudZone: Page]>([:])

        /// The gateway's answer to `asked`, for its zone.
        func keep(_ asked: GatewayWire.Prefetch, _ answer: GatewayWire.Batch) {
            pages.withLock { $0[asked.fetch.zone] = Page(asked: asked, answer: answer, at: .now) }
        }

        /// The page kept for exactly `asked`, taken (the remote's clock in it
        /// moved on by the time it waited); `nil` when there is none.
        func take(_ asked: GatewayWire.Prefetch) -> GatewayWire.Batch? {
            guard let page = pages.withLock({ $0.removeValue(forKey: asked.fetch.zone) }), page.asked == asked else { return nil }
            let waited = ContinuousClock.now - page.at
            guard waited <= .seconds(Self.lifetime) else { return nil }
            var answer = page.answer
            let (seconds, attoseconds) = waited.components
            answer.history?.now += Double(seconds) + Double(attoseconds) / 1e18
            return answer
        }

        /// Drops the pages of `zones` (`nil`: of every zone).
        func drop(_ zones: Set<CloudZone>?) {
            pages.withLock { pages in
                guard let zones else { return pages = [:] }
                for zone in zones { pages[zone] = nil }
            }
        }
    }
#endif  // Gateway
