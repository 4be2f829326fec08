#if Gateway
    import GroupStoreCloud
    import Synchronization

    /// The pages a gateway sent with its hints, each the answer to a fetch
    /// this client asked it to make (``GatewayWire/Prefetch``): taken once,
    /// instead of a request, by a fetch asked so (see ``take(_:)``).
    ///
    /// A page was read after the change its hint tells of. A later hint of
    /// its zone (a change after the read), the client's own write in it
    /// (before and after the write's request) and the end of the push
    /// connection drop it, so a fetch it answers sees the changes the client
    /// was told of, as a request would. A page is kept ``lifetime`` seconds
    /// at most. Its remote clock is not a measure (``GroupStoreCloud/CloudRemoteHistory/nowIsFresh``).
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

        /// The page kept for `asked`, taken (the remote's clock in it moved on
        /// by the time it waited); `nil` when there is none. A page answers the
        /// fetch it was asked for; or the same fetch asking about the mark the
        /// page's history has for its head (the bridge's mark moved there since
        /// it asked, with another zone's page of the same commit): the head of
        /// the history the page was read in is part of it.
        func take(_ asked: GatewayWire.Prefetch) -> GatewayWire.Batch? {
            guard let page = pages.withLock({ $0.removeValue(forKey: asked.fetch.zone) }) else { return nil }
            var headAsked = page.asked
            headAsked.fetch.history = page.answer.history.map { GatewayWire.HistoryRequest(mark: $0.head) }
            let keepsItsMark = page.asked.fetch.history != nil && page.answer.history?.keepsMark == true
            guard page.asked == asked || (keepsItsMark && headAsked == asked) else { return nil }
            let waited = ContinuousClock.now - page.at
            guard waited <= .seconds(Self.lifetime) else { return nil }
            var answer = page.answer
            let (seconds, attoseconds) = waited.components
            answer.history?.now += Double(seconds) + Double(attoseconds) / 1e18
            return answer
        }

        /// Runs `write`, the client's own write of `changes`, with the pages of
        /// their zones dropped before it and after it: a page read before the
        /// write, and kept while it went, does not have it.
        func writing<T>(_ changes: [CloudRecordChange], _ write: () async throws -> T) async rethrows -> T {
            let zones = Set(changes.map(\.id.zone))
            drop(zones)
            defer { drop(zones) }
            return try await write()
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
