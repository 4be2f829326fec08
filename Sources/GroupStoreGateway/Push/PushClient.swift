#if Gateway
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import Synchronization

    /// One push connection's outbox: hints merged while the connection is busy
    /// (a hint is "own" only if every hint merged into it was), replies to its
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
            var hint: Bool?
            var replies: [GatewayWire.PushMessage] = []
            /// The close code (``PushCloseCode``, or 1000) and reason.
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

        /// A change in a zone it subscribed to; `own`: made by its own writes.
        func hint(own: Bool) {
            outbox.withLock { $0.hint = ($0.hint ?? true) && own }
            wake.yield()
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

        /// What to write now, and the code and reason to close with after it, if any.
        func take() -> (messages: [GatewayWire.PushMessage], closing: (code: UInt16, reason: String)?) {
            outbox.withLock { outbox in
                var messages = outbox.replies
                if let own = outbox.hint { messages.append(.hint(own: own)) }
                outbox.replies = []
                outbox.hint = nil
                return (messages, outbox.closing)
            }
        }

        func finish() { wake.finish() }
    }
#endif  // Gateway
