#if Gateway
    import Foundation
    import GroupStoreCloud
    import HTTPTypes
    import HummingbirdWSClient
    import Logging
    import NIOCore
    import NIOWebSocket
    import Synchronization

    /// The client's push connection: a WebSocket to the gateway in use,
    /// subscribed to the zones the client fetches, kept open until cancelled.
    ///
    /// ```
    /// connect ──▶ hint (fetch what was missed) ──▶ subscribe(zones) ──▶ hints…
    ///    ▲                                                                │
    ///    └──── backoff 50 ms … 2 s (next gateway) ◀── closed / failed ◀───┘
    /// ```
    ///
    /// A connection the gateway refuses is closed at once with a
    /// ``PushCloseCode`` and the refusal's sentence (the token, the role, too
    /// many connections): the sentence is logged (info) and published on
    /// ``GatewayRemote/pushRefusals``, and the connection counts as failed
    /// (the backoff grows).
    struct PushConnection {
        let remote: GatewayRemote

        var logger: Logger { remote.logger }

        func run() async {
            var delay = 0.05
            while !Task.isCancelled {
                let url = remote.endpoints.pushURL
                let base = remote.endpoints.base
                let connected = Flag()
                var refused = false
                do {
                    var configuration = WebSocketClientConfiguration(
                        maxFrameSize: 1 << 16, closeTimeout: .seconds(5), autoPing: .enabled(timePeriod: .seconds(20)))
                    configuration.additionalHeaders[.authorization] = "Bearer " + remote.transport.bearer
                    if let origin = HTTPField.Name(GatewayWire.originHeader) { configuration.additionalHeaders[origin] = remote.origin }
                    let close = try await WebSocketClient.connect(
                        url: url, configuration: configuration, tlsConfiguration: remote.transport.tlsConfiguration, logger: quiet
                    ) { inbound, outbound, _ in
                        connected.set()
                        try await session(inbound: inbound, outbound: outbound)
                    }
                    if let close, case .unknown(let code) = close.closeCode,
                        let refusal = PushCloseCode.error(code: code, reason: close.reason)
                    {
                        logger.info(
                            "the gateway refused the push connection", metadata: ["gateway": "\(base)", "reason": "\(refusal.message)"])
                        remote.pushRefusals.yield(refusal)
                        // A token refused (expired, say) may have been renewed in its file: reconnect with it at once.
                        let renewed = code == PushCloseCode.unauthenticated ? await remote.transport.renewedToken() : false
                        refused = !renewed
                    }
                } catch {
                    if !Task.isCancelled {
                        logger.info(
                            "push connection to the gateway failed; reconnecting",
                            metadata: ["gateway": "\(base)", "error": "\(GatewayTransport.reason(error))"])
                    }
                }
                if Task.isCancelled { break }
                if connected.isSet && !refused {
                    delay = 0.05
                } else {
                    remote.endpoints.failed(base)
                }
                try? await Task.sleep(for: .seconds(delay * Double.random(in: 0.75...1.25)))
                delay = min(delay * 2, 2)
            }
        }

        /// One connection: a hint at once (what was committed while there was
        /// none sent its notification to nobody), the subscription, then every
        /// hint until the connection ends.
        private func session(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
            let changes = remote.zonesChanged.stream(bufferingNewest: 1)
            // Pages sent on another connection may have missed hints (and so may those of this one
            // once it ends); prefetches are asked again.
            remote.prefetched.drop(nil)
            defer { remote.prefetched.drop(nil) }
            remote.armed.withLock { armed in
                for zone in armed.keys { armed[zone]?.sent = false }
            }
            let first = try await subscribe(outbound, unless: nil)
            try await sendArmed(outbound)
            logger.debug("push connection open", metadata: ["gateway": "\(remote.endpoints.base)"])
            remote.hints.yield()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        guard case .text(let text) = message,
                            let push = try? GatewayWire.decode(GatewayWire.PushMessage.self, from: Data(text.utf8))
                        else { continue }
                        // Told after the page is kept or dropped, so that a fetch the message causes finds it so.
                        defer { remote.pushMessages.yield(push) }
                        switch push.type {
                        case .hint:
                            if let prefetch = push.prefetch, let answer = push.answer {
                                remote.prefetched.keep(prefetch, answer)
                            } else {
                                remote.prefetched.drop(push.zones.map { Set($0.compactMap(CloudZone.init(description:))) })
                            }
                            remote.hints.yield(from: push.own == true ? remote.origin : "", own: remote.origin)
                        case .subscribed:
                            // A zone fetched before this subscription took effect may have changed
                            // meanwhile, with a notification for nobody: fetch again.
                            remote.prefetched.drop(nil)
                            remote.hints.yield()
                        case .subscribe, .prefetch:
                            break
                        }
                    }
                }
                group.addTask {
                    var subscribed = first
                    for await _ in changes {
                        subscribed = try await subscribe(outbound, unless: subscribed)
                        try await sendArmed(outbound)
                    }
                }
                // The connection ended (or the subscription task failed): end the other.
                _ = try await group.next()
                group.cancelAll()
            }
        }

        /// Subscribes to the zones fetched, unless they are `subscribed`
        /// already (a subscription is a transaction for the gateway); the zones subscribed.
        private func subscribe(_ outbound: WebSocketOutboundWriter, unless subscribed: Set<CloudZone>?) async throws -> Set<CloudZone> {
            let zones = remote.zones.withLock { $0 }
            guard zones != subscribed else { return zones }
            let message = try GatewayWire.encode(GatewayWire.PushMessage.subscribe(Array(zones)))
            try await outbound.write(.text(String(decoding: message, as: UTF8.self)))
            return zones
        }

        /// Sends the prefetches not sent yet (after the subscription of their zones).
        private func sendArmed(_ outbound: WebSocketOutboundWriter) async throws {
            let unsent = remote.armed.withLock { armed in
                armed.compactMap { zone, entry -> GatewayWire.Prefetch? in
                    guard !entry.sent else { return nil }
                    armed[zone]?.sent = true
                    return entry.prefetch
                }
            }
            for prefetch in unsent {
                try await outbound.write(
                    .text(String(decoding: try GatewayWire.encode(GatewayWire.PushMessage.prefetch(prefetch)), as: UTF8.self)))
            }
        }

        /// Whether a connection opened.
        private final class Flag: Sendable {
            private let value = Mutex(false)
            func set() { value.withLock { $0 = true } }
            var isSet: Bool { value.withLock { $0 } }
        }

        /// The WebSocket client's own messages are not the library's to show, but for errors.
        private var quiet: Logger {
            var quiet = logger
            quiet.logLevel = max(logger.logLevel, .error)
            return quiet
        }
    }
#endif  // Gateway
