#if Gateway
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import GroupStoreCloudPostgres
    import HummingbirdWebSocket
    import NIOWebSocket
    import Logging
    import ServiceLifecycle
    import Synchronization

    /// The push connections of one gateway and the notices they get: the
    /// backend's one listener, fanned out to the clients subscribed to the
    /// zones a notice names (by tag), and to every client when it names none.
    ///
    /// A client subscribes to the zones it fetches; the hub keeps those its
    /// role may read (asked of the database, as the role) and checks them again
    /// when the role's shares change (an `m:` tag).
    ///
    /// Its limits: ``maxPerIdentity`` connections per identity (past it, a new
    /// one is closed with ``PushCloseCode/tooMany``), and each `subscribe`
    /// frame (a database transaction) takes from the identity's rate bucket,
    /// the one its requests take from (past it, the connection is closed with
    /// ``PushCloseCode/tooMany``). A `prefetch` frame is kept for a zone the
    /// connection subscribed to, one per zone, of ``maxPrefetchBytes`` at
    /// most; the fetch it asks for takes from the bucket when it is made
    /// (past it, the hint goes without the page), within ``prefetchTimeout``.
    final class PushHub: Service, Sendable {
        let backend: any GatewayBackend
        let metrics: GatewayMetrics
        let logger: Logger
        let maxZones: Int
        let maxPerIdentity: Int
        let limiter: RateLimiter
        /// Told of each notice before its hints go out, so that a fetch a hint
        /// causes is never answered by a memory that has not seen the notice;
        /// and of the zones a subscription found readable.
        let fetchMemory: FetchMemory
        /// Makes the clients' prefetches, as their requests would be made.
        let fetch: GatewayFetch
        /// A prefetch's deadline, as a request's (``GatewayConfiguration/requestTimeout``, ``GatewayConfiguration/unansweredGrace``).
        let timeout: Double
        let grace: Double

        private struct State {
            var clients: [UInt64: PushClient] = [:]
            var zones: [UInt64: Set<CloudZone>] = [:]
            var tags: [UInt64: Set<String>] = [:]
            var byTag: [String: Set<UInt64>] = [:]
            /// The zone of each zone tag in `byTag`.
            var zoneOfTag: [String: CloudZone] = [:]
            /// Connections by ``GatewayIdentity/key``.
            var perIdentity: [String: Int] = [:]
            var next: UInt64 = 0
        }
        private let state = Mutex(State())

        init(
            backend: any GatewayBackend, metrics: GatewayMetrics, logger: Logger, maxZones: Int, maxPerIdentity: Int, limiter: RateLimiter,
            fetchMemory: FetchMemory, fetch: GatewayFetch, timeout: Double, grace: Double
        ) {
            self.backend = backend
            self.fetchMemory = fetchMemory
            self.fetch = fetch
            self.timeout = timeout
            self.grace = grace
            self.metrics = metrics
            self.logger = logger
            self.maxZones = maxZones
            self.maxPerIdentity = maxPerIdentity
            self.limiter = limiter
        }

        /// Hands the backend's notices on until shutdown, then closes the connections.
        func run() async throws {
            let notices = backend.notices()
            fetchMemory.follow(true)
            await withTaskExecutorPreference(backend.noticeExecutor) {
                await cancelWhenGracefulShutdown {
                    for await notice in notices {
                        self.fetchMemory.note(notice)
                        self.deliver(notice)
                    }
                }
            }
            fetchMemory.follow(false)
            for client in state.withLock({ Array($0.clients.values) }) { client.close("the gateway is shutting down") }
        }

        var count: Int { state.withLock { $0.clients.count } }

        /// Serves one push connection of `identity` until it closes (at once,
        /// with ``PushCloseCode/tooMany``, past ``maxPerIdentity``).
        func serve(identity: GatewayIdentity, origin: String, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
            let client = state.withLock { state -> PushClient? in
                guard state.perIdentity[identity.key, default: 0] < maxPerIdentity else { return nil }
                state.perIdentity[identity.key, default: 0] += 1
                state.next += 1
                let client = PushClient(id: state.next, identity: identity, origin: origin)
                state.clients[client.id] = client
                return client
            }
            guard let client else {
                metrics.refused("push-connections")
                let reason = "too many push connections for \(identity.described) (at most \(maxPerIdentity))"
                await Self.close(outbound, code: PushCloseCode.tooMany, reason: reason)
                return
            }
            metrics.connected(count)
            defer {
                remove(client)
                metrics.connected(count)
            }
            // The role is checked before anything is sent (as for a request: granted to the
            // gateway, not bypassing row-level security), so a refusal is said at once.
            do {
                _ = try await backend.acting(as: identity, origin: nil).readable([])
            } catch let error as CloudSyncError where error.code == .unauthorized || error.code == .permissionDenied {
                await Self.close(outbound, code: PushCloseCode.refused, reason: error.message)
                return
            } catch {
                await Self.close(outbound, code: PushCloseCode.unavailable, reason: "the gateway cannot check the role now: \(error)")
                return
            }
            // The writer ends the connection: it writes what is queued, then the close the
            // reader, the expiry or the hub asked for (the first reason given).
            await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await self.read(inbound, client)
                    client.close("closed")
                    return false
                }
                group.addTask {
                    await self.write(outbound, client)
                    return true
                }
                if let expiresAt = identity.expiresAt {
                    group.addTask {
                        try? await Task.sleep(for: .seconds(max(0, expiresAt.timeIntervalSinceNow)))
                        let when = TokenVerifier.format(expiresAt.timeIntervalSince1970)
                        if !Task.isCancelled {
                            client.close("token refused: the token expired at \(when)", code: PushCloseCode.unauthenticated)
                        }
                        return false
                    }
                }
                while let writerEnded = await group.next(), !writerEnded {}
                group.cancelAll()
            }
        }

        /// Closes a connection the gateway refuses (its token, or its role) with the refusal's code and sentence.
        static func refuse(_ outbound: WebSocketOutboundWriter, _ error: any Error, metrics: GatewayMetrics) async {
            switch error {
            case let error as GatewayError:
                metrics.refused("token")
                await close(outbound, code: PushCloseCode.unauthenticated, reason: "token refused: \(error.message)")
            case let error as CloudSyncError where error.code == .unauthorized:
                await close(outbound, code: PushCloseCode.refused, reason: error.message)
            default:
                await close(outbound, code: PushCloseCode.unavailable, reason: "the gateway failed: \(error)")
            }
        }

        private static func close(_ outbound: WebSocketOutboundWriter, code: UInt16, reason: String) async {
            try? await outbound.close(code == 1000 ? .normalClosure : .unknown(code), reason: PushCloseCode.reason(reason))
        }

        private func read(_ inbound: WebSocketInboundStream, _ client: PushClient) async {
            do {
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard case .text(let text) = message,
                        let push = try? GatewayWire.decode(GatewayWire.PushMessage.self, from: Data(text.utf8))
                    else { continue }
                    if push.type == .prefetch, let prefetch = push.prefetch {
                        // Of a zone subscribed to (and so readable) only, and small: made when the zone changes.
                        guard text.utf8.count <= Self.maxPrefetchBytes else { continue }
                        if state.withLock({ $0.zones[client.id]?.contains(prefetch.fetch.zone) ?? false }) { client.arm(prefetch) }
                        continue
                    }
                    guard push.type == .subscribe else { continue }
                    // Each subscription is a database transaction: it takes from the identity's bucket.
                    let wait = limiter.take(client.identity.key)
                    if let refusal = RateLimitMiddleware.refusal(wait, identity: client.identity, what: "subscriptions") {
                        metrics.refused("rate")
                        client.close(refusal.message, code: PushCloseCode.tooMany)
                        return
                    }
                    await subscribe(client, to: (push.zones ?? []).compactMap(CloudZone.init(description:)))
                }
            } catch {
                logger.debug("push connection ended", metadata: ["role": "\(client.role)", "error": "\(error)"])
            }
        }

        private func write(_ outbound: WebSocketOutboundWriter, _ client: PushClient) async {
            for await _ in client.wakes {
                let taken = client.take()
                do {
                    for message in taken.replies {
                        try await outbound.write(.text(String(decoding: try GatewayWire.encode(message), as: UTF8.self)))
                    }
                    // Read at once, sent in order: before the hint taken with them, which may drop their pages.
                    let hints = await withTaskGroup(of: (Int, Data).self) { group in
                        for (index, prefetch) in taken.prefetches.enumerated() {
                            group.addTask { (index, await self.hint(prefetch, for: client)) }
                        }
                        return await group.reduce(into: [Int: Data]()) { $0[$1.0] = $1.1 }
                    }
                    for index in taken.prefetches.indices {
                        try await outbound.write(.text(String(decoding: hints[index] ?? Data(), as: UTF8.self)))
                    }
                    if let hint = taken.hint {
                        try await outbound.write(.text(String(decoding: try GatewayWire.encode(hint), as: UTF8.self)))
                    }
                    if let closing = taken.closing {
                        await Self.close(outbound, code: closing.code, reason: closing.reason)
                        return
                    }
                } catch {
                    return
                }
            }
        }

        /// How long a prefetch may take, in seconds, before its hint goes
        /// without the page (the client then fetches, within the request timeout).
        static let prefetchTimeout: Double = 2
        /// The most records of a prefetched page encoded on the connection's
        /// event loop, as a request's answer is (`EventLoopExecutor`);
        /// a larger page is encoded on the global pool.
        static let encodedOnTheLoop = 100
        /// The most bytes of a `prefetch` frame kept (its fetch and subscription; larger ones are ignored).
        static let maxPrefetchBytes = 8 * 1024

        /// The hint of a change in `prefetch`'s zone, with the page the
        /// prefetch answers now, read as a request of the client's would be
        /// (and taking from its identity's bucket); without it (the client
        /// fetches for itself) when it cannot be read or does not fit a frame.
        private func hint(_ prefetch: GatewayWire.Prefetch, for client: PushClient) async -> Data {
            // Encoded only when it is sent.
            func plain() -> Data {
                (try? GatewayWire.encode(GatewayWire.PushMessage.hint(own: false, zones: [prefetch.fetch.zone]))) ?? Data()
            }
            guard limiter.take(client.identity.key) == nil else {
                metrics.refused("rate")
                return plain()
            }
            // A short deadline: the hints queued behind it wait for it.
            let seconds = min(timeout, Self.prefetchTimeout)
            let deadline = RequestDeadline(
                instant: .now + .seconds(seconds), seconds: seconds, grace: min(grace, seconds), backend: backend)
            do {
                let answer = try await fetch.answer(prefetch, identity: client.identity, origin: nil, deadline: deadline)
                let encode = { try GatewayWire.encode(GatewayWire.PushMessage.hint(prefetch, answer: answer)) }
                // A large page is encoded on the pool: it would hold up the connections of its event loop.
                let message =
                    answer.changed.count <= Self.encodedOnTheLoop
                    ? try encode() : try await withTaskExecutorPreference(globalConcurrentExecutor) { try encode() }
                return message.count <= GatewayWire.maxPushBytes ? message : plain()
            } catch {
                logger.debug("a prefetch failed: the client fetches", metadata: ["role": "\(client.role)", "error": "\(error)"])
                return plain()
            }
        }

        /// Keeps of `zones` those the client's role may read, and answers with them.
        func subscribe(_ client: PushClient, to zones: [CloudZone]) async {
            let asked = Array(Set(zones).prefix(maxZones))
            do {
                let stamp = fetchMemory.stamp()
                let readable = try await backend.acting(as: client.identity, origin: nil).readable(asked)
                fetchMemory.proved(client.identity, may: readable, since: stamp)
                state.withLock { state in
                    guard state.clients[client.id] != nil else { return }
                    state.zones[client.id] = readable
                    retag(client.id, &state)
                }
                client.keepArmed(readable)
                client.reply(.subscribed(Array(readable)))
            } catch let error as CloudSyncError where error.code == .unauthorized || error.code == .permissionDenied {
                client.close(error.message, code: PushCloseCode.refused)
            } catch {
                logger.info("cannot check a push subscription", metadata: ["role": "\(client.role)", "error": "\(error)"])
            }
        }

        /// A notice: a hint to each client it concerns.
        func deliver(_ notice: GatewayNotice) {
            let tagged = notice.tags != nil && backend.tag(of: "public") != nil
            // Each client the notice concerns, and which of its zones changed (`nil`: any may have).
            let (targets, members) = state.withLock { state -> ([(PushClient, Set<CloudZone>?)], [PushClient]) in
                guard tagged, let tags = notice.tags else {
                    // Any zone (and maybe a key read since): every client, tags made again.
                    for id in Array(state.clients.keys) { retag(id, &state) }
                    return (state.clients.values.map { ($0, nil) }, [])
                }
                var ids = Set<UInt64>()
                var memberIDs = Set<UInt64>()
                for tag in tags {
                    guard let found = state.byTag[tag] else { continue }
                    ids.formUnion(found)
                    if tag.hasPrefix("m:") { memberIDs.formUnion(found) }
                }
                let zones = Set(tags.compactMap { state.zoneOfTag[$0] })
                let targets = ids.compactMap { id in
                    state.clients[id].map { ($0, memberIDs.contains(id) ? nil : (state.zones[id] ?? []).intersection(zones)) }
                }
                return (targets, memberIDs.compactMap { state.clients[$0] })
            }
            for (client, zones) in targets { client.changed(zones, own: !notice.origin.isEmpty && notice.origin == client.origin) }
            metrics.hinted(targets.count)
            // A member's shares changed: check its subscriptions again.
            for client in members {
                let zones = state.withLock { $0.zones[client.id] ?? [] }
                Task { await self.subscribe(client, to: Array(zones)) }
            }
        }

        private func retag(_ id: UInt64, _ state: inout State) {
            for tag in state.tags[id] ?? [] {
                state.byTag[tag]?.remove(id)
                if state.byTag[tag]?.isEmpty == true {
                    state.byTag[tag] = nil
                    state.zoneOfTag[tag] = nil
                }
            }
            guard let client = state.clients[id], let member = backend.tag(of: "member:" + client.identity.user) else {
                state.tags[id] = nil
                return
            }
            var tags: Set<String> = ["m:" + member]
            for zone in state.zones[id] ?? [] {
                guard let tag = backend.tag(of: zone.description).map({ "z:" + $0 }) else { continue }
                tags.insert(tag)
                state.zoneOfTag[tag] = zone
            }
            state.tags[id] = tags
            for tag in tags { state.byTag[tag, default: []].insert(id) }
        }

        private func remove(_ client: PushClient) {
            state.withLock { state in
                state.clients[client.id] = nil
                state.perIdentity[client.identity.key, default: 1] -= 1
                if state.perIdentity[client.identity.key] == 0 { state.perIdentity[client.identity.key] = nil }
                state.zones[client.id] = nil
                // No client: its tags leave the index.
                retag(client.id, &state)
            }
            client.finish()
        }
    }
#endif  // Gateway
