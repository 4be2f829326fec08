#if Gateway
    import Foundation
    import GroupStoreCloud
    import Crypto
    import GroupStoreCloudHTTP
    import GroupStoreCloudPostgres
    import Synchronization

    /// Answers fetches from one read of the database: a fetch is answered by
    /// an answer the database gave to the same request, of the same reader,
    /// for as long as nothing may have changed in its zone since; and fetches
    /// that arrive while the database is asked wait for that read instead of
    /// each asking again. So when a commit's hints make every device fetch
    /// its zone, the database reads the commit's changes once per gateway,
    /// whatever the number of devices.
    ///
    /// **Who shares an answer.** The reader (``Key``): the role, and the
    /// token's restrictions and the claims that the request's and the
    /// restrictions' filters read. Row-level security decides what a role
    /// reads zone by zone (`groupstore.may_read`: a zone is read whole or
    /// not at all), so the readers of one zone get the same answer to the
    /// same request. For a role, the reader is its user. The devices of a
    /// fleet (``GatewayIdentity/device``) share their role, and the database
    /// decides per device whether it may read a zone: a device takes a shared
    /// answer only once the database said, as that device, that it may read
    /// the zone (``GatewayRoleDatabase/readable(_:)``, asked once and kept
    /// until anyone's shares change or ``proofLifetime`` passes).
    ///
    /// **When an answer is stale.** The backend's notices (``GatewayNotice``)
    /// say which zones a commit touched: a notice of the answer's zone, of
    /// any zone (a notice without tags, a reconnection of the listener: a
    /// failover), or of anyone's shares since the read started makes it
    /// stale. A notice is sent at commit, so a read that started after it
    /// sees the change; the notices counted are those before the read
    /// started, so a commit during the read makes its answer stale at once.
    /// What it does not know makes an answer stale too: an answer is kept
    /// ``lifetime`` seconds at most (a log compacted meanwhile sends no
    /// notice, so a token it made too old is refused that much later); the
    /// memory is emptied when it holds ``capacity`` answers or ``budget``
    /// bytes of them; nothing is shared while the backend's
    /// listener is not connected (``GatewayBackend/isListening``); a notice
    /// lost by a full buffer is heard as a notice of any zone; nothing is
    /// shared while the notices are not followed (``PushHub`` follows them,
    /// and notes each here before its hints go out); an answer held back by
    /// the transaction fence, or one whose history mark the remote no longer
    /// keeps, is never kept. The remote's clock in a kept answer
    /// (``GatewayWire/History/now``) moves on with the gateway's. A write
    /// through this gateway marks its zones changed at once, so a client's
    /// read after its own write is read again.
    ///
    /// **What it cannot know.** A notice reaches each gateway on its own
    /// listener, a few milliseconds after the commit. A client whose hint
    /// came from one gateway and whose fetch goes to another (a load balancer
    /// without sticky sessions) may be answered "nothing new" by one that has
    /// not heard the notice yet; the change comes with its next hint or
    /// periodic fetch (`CloudSyncConfiguration.fetchInterval`).
    /// A change of shares takes effect for a device when its notice comes,
    /// as a hint does. Gateways of the client's own list
    /// (`http://gw1,gw2`) are tried in order, so its hints and fetches come
    /// from one.
    final class FetchMemory: Sendable {
        /// What an answer is shared by: the SHA-256 of the reader and the request.
        struct Key: Hashable {
            let digest: [UInt8]

            /// - Parameter subscription: what the read is narrowed to (the
            ///   request's subscription, restricted by the token's `where`).
            init(
                identity: GatewayIdentity, endpoint: String, request: some Encodable, subscription: CloudSubscription
            ) throws {
                let claims = subscription.filters.values.reduce(into: Set<String>()) { $0.formUnion($1.claims) }
                let reader = Reader(
                    role: identity.role, endpoint: endpoint, filters: subscription.filters,
                    claims: identity.claims.filter { claims.contains($0.key) })
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                var hash = Crypto.SHA256()
                hash.update(data: try encoder.encode(reader))
                hash.update(data: try encoder.encode(request))
                digest = Array(hash.finalize())
            }

            private struct Reader: Encodable {
                let role: String
                let endpoint: String
                let filters: [String: CloudFilter]
                let claims: [String: CloudValue]
            }
        }

        /// When a read started: the notices counted before it.
        struct Stamp {
            let count: UInt64
            let at: ContinuousClock.Instant
        }

        /// An answer, and how long ago its zone last changed (its commit-to-device lag), if known.
        struct Answer {
            let batch: GatewayWire.Batch
            let fromMemory: Bool
            let lag: Duration?
        }

        private struct Kept {
            let zone: String?
            let stamp: Stamp
            let batch: GatewayWire.Batch
            let bytes: Int
        }

        private struct Reading {
            let zone: String?
            let stamp: Stamp
            let task: Task<GatewayWire.Batch, any Error>
            /// The fetches waiting for it besides the one that started it.
            var joined = 0
        }

        private struct State {
            /// Notices counted while followed.
            var count: UInt64 = 0
            /// The count and time of the last notice of each zone tag.
            var zones: [String: (count: UInt64, at: ContinuousClock.Instant)] = [:]
            /// The count at the last notice of any zone (or of shares).
            var anyZone: UInt64 = 0
            var following = false
            var kept: [Key: Kept] = [:]
            var keptBytes = 0
            var reading: [Key: Reading] = [:]
            /// The zones each device may read, by ``GatewayIdentity/key``, as the database said.
            var proven: [String: [String: Stamp]] = [:]
            /// How many (device, zone) pairs `proven` holds.
            var provenCount = 0

            /// One more change: of the zones of `tags`, or of any zone (`nil`,
            /// or past ``FetchMemory/capacity`` zones remembered).
            mutating func changed(_ tags: [String]?) {
                count += 1
                guard let tags else {
                    anyZone = count
                    zones = [:]
                    return
                }
                for tag in tags { zones[tag] = (count, .now) }
                if zones.count > FetchMemory.capacity {
                    anyZone = count
                    zones = [:]
                }
            }

            func isStale(_ stamp: Stamp, zone tag: String?, lifetime: Double) -> Bool {
                anyZone > stamp.count || (tag.flatMap { zones[$0]?.count } ?? 0) > stamp.count
                    || ContinuousClock.now - stamp.at > .seconds(lifetime) || (tag == nil && count > stamp.count)
            }
        }

        /// How long an answer is kept, in seconds: long enough that an idle
        /// device's zones are not read again between most commits (a fleet's
        /// every device reads each of its zones once per lifetime at most).
        static let lifetime: Double = 300
        /// How long a device's proof that it may read a zone is kept, in
        /// seconds (a change of shares ends it sooner).
        static let proofLifetime: Double = 600
        /// How many answers (and devices' proofs) are kept before the memory
        /// is emptied, and how many zones' last notices are remembered before
        /// every zone counts as changed.
        static let capacity = 50_000
        /// How many bytes of answers (as JSON) are kept before the memory is emptied.
        static let budget = 64 << 20

        private let backend: any GatewayBackend
        private let state = Mutex(State())

        init(backend: any GatewayBackend) { self.backend = backend }

        /// Whether the notices are followed from now on (when not, nothing is
        /// shared): a read stamped before cannot have seen what was sent before.
        func follow(_ following: Bool) {
            state.withLock { state in
                state.following = following
                state.kept = [:]
                state.keptBytes = 0
                state.proven = [:]
                state.provenCount = 0
                state.count += 1
                state.anyZone = state.count
                state.zones = [:]
            }
        }

        /// A notice: the zones it names (all of them without tags, or with a
        /// share's) may have changed.
        func note(_ notice: GatewayNotice) {
            state.withLock { state in
                guard let tags = notice.tags, !tags.contains(where: { $0.hasPrefix("m:") }) else {
                    state.changed(nil)
                    state.proven = [:]
                    state.provenCount = 0
                    return
                }
                state.changed(tags.filter { $0.hasPrefix("z:") }.map { String($0.dropFirst(2)) })
            }
        }

        /// The answer to a fetch of `zone`: kept, read by another fetch of the
        /// same reader now, or read by `read` (and shared meanwhile and after).
        ///
        /// A shared read that fails (the deadline of the request that started
        /// it, say) is made again once for the fetches that waited for it: the
        /// first of them reads, the others wait for that read (each reading
        /// alone would make the database's work grow with the fetches
        /// waiting). If that read fails too, each reads alone.
        ///
        /// - Parameters:
        ///   - mayRead: for a device, asks the database whether it may read `zone`.
        ///   - again: whether a shared read this fetch waited for failed already.
        func answer(
            _ key: Key, zone: CloudZone, identity: GatewayIdentity,
            mayRead: @Sendable () async throws -> Bool,
            read: @escaping @Sendable () async throws -> GatewayWire.Batch,
            again: Bool = false
        ) async throws -> Answer {
            let tag = backend.tag(of: zone.description)
            // While the listener reconnects, a change would send no notice.
            guard backend.isListening, state.withLock({ $0.following }) else { return try await alone(read, tag) }
            if identity.device != nil, !(try await proven(identity, zone, mayRead)) { return try await alone(read, tag) }
            enum Found {
                case kept(GatewayWire.Batch, ContinuousClock.Instant)
                case reading(Task<GatewayWire.Batch, any Error>)
                case started(Task<GatewayWire.Batch, any Error>)
            }
            let found = state.withLock { state -> Found in
                if let kept = state.kept[key] {
                    if kept.zone == tag, !state.isStale(kept.stamp, zone: tag, lifetime: Self.lifetime) {
                        return .kept(kept.batch, kept.stamp.at)
                    }
                    state.kept[key] = nil
                    state.keptBytes -= kept.bytes
                }
                if let reading = state.reading[key], reading.zone == tag,
                    !state.isStale(reading.stamp, zone: tag, lifetime: Self.lifetime)
                {
                    state.reading[key]?.joined += 1
                    return .reading(reading.task)
                }
                let stamp = Stamp(count: state.count, at: .now)
                // On the request's event loop, as the request itself (EventLoopExecutor).
                let task = Task(executorPreference: EventLoopExecutor.current) {
                    do {
                        let batch = try await read()
                        self.share(batch, key: key, tag: tag, stamp: stamp)
                        return batch
                    } catch {
                        self.share(nil, key: key, tag: tag, stamp: stamp)
                        throw error
                    }
                }
                state.reading[key] = Reading(zone: tag, stamp: stamp, task: task)
                return .started(task)
            }
            switch found {
            case .kept(var batch, let at):
                let (seconds, attoseconds) = (ContinuousClock.now - at).components
                batch.history?.now += Double(seconds) + Double(attoseconds) / 1e18
                return Answer(batch: batch, fromMemory: true, lag: lag(batch, tag))
            case .reading(let task):
                guard let batch = try? await task.value else {
                    // The read failed, and is no longer being read (``share(_:key:tag:stamp:)``).
                    if again { return try await alone(read, tag) }
                    return try await answer(key, zone: zone, identity: identity, mayRead: mayRead, read: read, again: true)
                }
                return Answer(batch: batch, fromMemory: true, lag: lag(batch, tag))
            case .started(let task):
                let batch = try await task.value
                return Answer(batch: batch, fromMemory: false, lag: lag(batch, tag))
            }
        }

        /// How many fetches wait for the read of `key` under way besides the
        /// one that started it (none when none is under way).
        func joined(_ key: Key) -> Int { state.withLock { $0.reading[key]?.joined ?? 0 } }

        private func alone(_ read: () async throws -> GatewayWire.Batch, _ tag: String?) async throws -> Answer {
            let batch = try await read()
            return Answer(batch: batch, fromMemory: false, lag: lag(batch, tag))
        }

        /// Whether the database said `identity` may read `zone` (asking it if not yet).
        private func proven(_ identity: GatewayIdentity, _ zone: CloudZone, _ mayRead: () async throws -> Bool) async throws -> Bool {
            let (key, name) = (identity.key, zone.description)
            let known = state.withLock { state -> Bool in
                guard let stamp = state.proven[key]?[name] else { return false }
                return state.anyZone <= stamp.count && ContinuousClock.now - stamp.at <= .seconds(Self.proofLifetime)
            }
            if known { return true }
            let stamp = self.stamp()
            guard try await mayRead() else { return false }
            // A change of shares noted meanwhile: the answer may be older than it (ask again next time).
            return proved(identity, may: [zone], since: stamp)
        }

        /// The stamp of a question to the database about to be asked.
        func stamp() -> Stamp { state.withLock { Stamp(count: $0.count, at: .now) } }

        /// The database said, asked since `stamp`, that `identity` may read
        /// `zones` (a device's push subscription asks it too).
        /// Whether it was kept: not when the notices are not followed, or
        /// anyone's shares changed since `stamp`.
        @discardableResult
        func proved(_ identity: GatewayIdentity, may zones: some Collection<CloudZone>, since stamp: Stamp) -> Bool {
            guard identity.device != nil, !zones.isEmpty else { return false }
            return state.withLock { state in
                guard state.following, state.anyZone <= stamp.count else { return false }
                // Bounded by (device, zone) pairs: a device may name any number of zones of its own.
                if state.provenCount + zones.count > Self.capacity {
                    state.proven = [:]
                    state.provenCount = 0
                }
                for zone in zones where state.proven[identity.key, default: [:]].updateValue(stamp, forKey: zone.description) == nil {
                    state.provenCount += 1
                }
                return true
            }
        }

        /// A write through this gateway changed `zones`: its own next fetch is
        /// read again even before the notice of the commit comes.
        func wrote(_ zones: [CloudZone]) {
            let tags = zones.map { backend.tag(of: $0.description) }
            state.withLock { state in state.changed(tags.contains(nil) ? nil : tags.compactMap { $0 }) }
        }

        /// A read's answer (`nil`: it failed): no longer being read, and kept if it may be.
        private func share(_ batch: GatewayWire.Batch?, key: Key, tag: String?, stamp: Stamp) {
            let keeps = batch.map { !$0.heldBack && ($0.history?.keepsMark ?? true) } ?? false
            let bytes = keeps ? ((try? GatewayWire.encode(batch).count) ?? Self.budget) : 0
            state.withLock { state in
                if let reading = state.reading[key], reading.stamp.count == stamp.count, reading.stamp.at == stamp.at {
                    state.reading[key] = nil
                }
                guard let batch, keeps, state.following, bytes < Self.budget / 4 else { return }
                if state.kept.count >= Self.capacity || state.keptBytes + bytes > Self.budget {
                    state.kept = [:]
                    state.keptBytes = 0
                }
                if let old = state.kept[key] { state.keptBytes -= old.bytes }
                state.kept[key] = Kept(zone: tag, stamp: stamp, batch: batch, bytes: bytes)
                state.keptBytes += bytes
            }
        }

        /// For an answer that carries changes: how long ago the last notice of its zone came.
        private func lag(_ batch: GatewayWire.Batch, _ tag: String?) -> Duration? {
            guard let tag, !batch.changed.isEmpty || !batch.deleted.isEmpty || !(batch.movedOut?.isEmpty ?? true) else { return nil }
            return state.withLock { state in state.zones[tag].map { ContinuousClock.now - $0.at } }
        }
    }
#endif  // Gateway
