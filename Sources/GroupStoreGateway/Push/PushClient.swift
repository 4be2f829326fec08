#if Gateway
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import Synchronization

    /// One push connection's outbox: hints merged while the connection is busy
    /// (a hint is "own" only if every hint merged into it was), the fetches
    /// to make and send with a hint (its prefetches), replies to its
    /// subscriptions, and a reason to close it; its writer drains it on each wake.
    final class PushClient: Sendable {
        let id: UInt64
        let identity: GatewayIdentity
        var role: String { identity.role }
        let origin: String
        let wakes: AsyncStream<Void>
        private let wake: AsyncStream<Void>.Continuation
        private let outbox = Mutex<Outbox>(Outbox())

        struct Outbox {
            /// A hint to send: whether it is own, and the zones it names (`nil`: any).
            var hint: (own: Bool, zones: Set<CloudZone>?)?
            var replies: [GatewayWire.PushMessage] = []
            /// The fetch the client will make when each zone next changes, until it does.
            var armed: [CloudZone: GatewayWire.Prefetch] = [:]
            /// Armed fetches whose zone changed: to make, and send with their hint.
            var prefetches: [GatewayWire.Prefetch] = []
            /// The close code (``PushCloseCode``, or 1000) and reason.
            var closing: (code: UInt16, reason: String)?

            mutating func merge(own: Bool, zones: Set<CloudZone>?) {
                guard let hint else {
                    self.hint = (own, zones)
                    return
                }
                self.hint = (hint.own && own, hint.zones.flatMap { old in zones.map { old.union($0) } })
            }
        }

        /// What the writer sends next, in this order.
        struct Taken {
            var replies: [GatewayWire.PushMessage]
            var prefetches: [GatewayWire.Prefetch]
            /// After the prefetches' hints, so that it is never overtaken by a page read before its change.
            var hint: GatewayWire.PushMessage?
            var closing: (code: UInt16, reason: String)?
        }

        init(id: UInt64, identity: GatewayIdentity, origin: String) {
            self.id = id
            self.identity = identity
            self.origin = origin
            let pair = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            wakes = pair.stream
            wake = pair.continuation
        }

        /// A change in `zones` of those it subscribed to (`nil`: in any). Its
        /// own change is a hint, armed zones' fetches are made and sent with
        /// their hint, any other zone is a hint.
        func changed(_ zones: Set<CloudZone>?, own: Bool) {
            outbox.withLock { outbox in
                guard !own, let zones else { return outbox.merge(own: own, zones: zones) }
                var plain = Set<CloudZone>()
                for zone in zones {
                    if let prefetch = outbox.armed.removeValue(forKey: zone) {
                        outbox.prefetches.append(prefetch)
                    } else {
                        plain.insert(zone)
                    }
                }
                if !plain.isEmpty || zones.isEmpty { outbox.merge(own: false, zones: plain.isEmpty ? nil : plain) }
            }
            wake.yield()
        }

        /// The fetch the client will make when `prefetch`'s zone next changes (replacing the one before).
        func arm(_ prefetch: GatewayWire.Prefetch) {
            outbox.withLock { $0.armed[prefetch.fetch.zone] = prefetch }
        }

        /// Its subscription now holds `zones`: fetches armed for others are forgotten.
        func keepArmed(_ zones: Set<CloudZone>) {
            outbox.withLock { $0.armed = $0.armed.filter { zones.contains($0.key) } }
        }

        func reply(_ message: GatewayWire.PushMessage) {
            outbox.withLock { $0.replies.append(message) }
            wake.yield()
        }

        /// Closes the connection after what is queued, saying why (`code`: a
        /// ``PushCloseCode`` for a refusal, 1000 otherwise); the first reason given stays.
        func close(_ reason: String, code: UInt16 = 1000) {
            outbox.withLock { $0.closing = $0.closing ?? (code, reason) }
            wake.yield()
        }

        /// What to send now, and the code and reason to close with after it, if any.
        func take() -> Taken {
            outbox.withLock { outbox in
                defer {
                    outbox.replies = []
                    outbox.prefetches = []
                    outbox.hint = nil
                }
                let hint = outbox.hint.map { GatewayWire.PushMessage.hint(own: $0.own, zones: $0.zones) }
                return Taken(replies: outbox.replies, prefetches: outbox.prefetches, hint: hint, closing: outbox.closing)
            }
        }

        func finish() { wake.finish() }
    }
#endif  // Gateway
