#if Gateway
    import Foundation
    import GroupStoreCloud
    import Crypto
    import GroupStoreCloudHTTP
    import Synchronization

    /// Answers a fetch that would find nothing new without the database.
    ///
    /// A fetch the database answered with nothing (no record changed, deleted
    /// or moved out, no more pages, nothing held back by the fence, and the
    /// client's history mark kept) is kept, by the identity that asked and
    /// the request (its JSON with sorted keys: one spelling of it). The same request is answered from it again
    /// for as long as nothing may have changed in its zone: the backend's
    /// notices (``GatewayNotice``) say which zones a commit touched, and a
    /// notice of that zone, of any zone (a notice without tags, a
    /// reconnection of the listener: a failover), or of anyone's shares since
    /// the database was asked makes the kept answer stale. A notice is sent
    /// at commit, so a read that started after it sees the change; the notices
    /// counted are those before the read started, so a commit during the read
    /// makes its answer stale at once.
    ///
    /// What it does not know makes an answer stale too: an answer is kept
    /// ``lifetime`` seconds at most (a log compacted meanwhile sends no
    /// notice), the memory is emptied when it holds ``capacity`` answers,
    /// nothing is answered while the backend's listener is not connected
    /// (``GatewayBackend/isListening``), a notice lost by a full buffer is
    /// heard as a notice of any zone, and nothing is kept while the notices
    /// are not followed (``PushHub`` follows
    /// them, and notes each here before its hints go out). The remote's clock
    /// in a kept answer (``GatewayWire/History/now``) moves on with the
    /// gateway's.
    final class FetchMemory: Sendable {
        struct Key: Hashable {
            let identity: GatewayIdentity
            let endpoint: String
            /// The SHA-256 of the request's JSON (a key of 32 bytes, whatever the request's size).
            let request: [UInt8]

            init(identity: GatewayIdentity, endpoint: String, request: some Encodable) throws {
                self.identity = identity
                self.endpoint = endpoint
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                self.request = Array(Crypto.SHA256.hash(data: try encoder.encode(request)))
            }
        }

        /// When an answer was read: the notices counted before the read.
        struct Stamp {
            let count: UInt64
            let at: ContinuousClock.Instant
        }

        private struct Kept {
            let zone: String?
            let stamp: Stamp
            let answer: GatewayWire.Batch
        }

        private struct State {
            /// Notices counted while followed.
            var count: UInt64 = 0
            /// The count at the last notice of each zone tag.
            var zones: [String: UInt64] = [:]
            /// The count at the last notice of any zone (or of shares).
            var anyZone: UInt64 = 0
            var following = false
            var kept: [Key: Kept] = [:]
        }

        /// How long an answer is kept, in seconds.
        static let lifetime: Double = 30
        /// How many answers are kept before the memory is emptied, and how
        /// many zones' last notices are remembered before every zone counts as
        /// changed.
        static let capacity = 50_000

        private let backend: any GatewayBackend
        private let state = Mutex(State())

        init(backend: any GatewayBackend) { self.backend = backend }

        /// Whether the notices are followed from now on (when not, nothing is
        /// kept): a read stamped before cannot have seen what was sent before.
        func follow(_ following: Bool) {
            state.withLock { state in
                state.following = following
                state.kept = [:]
                state.count += 1
                state.anyZone = state.count
                state.zones = [:]
            }
        }

        /// A notice: the zones it names (all of them without tags, or with a
        /// share's) may have changed.
        func note(_ notice: GatewayNotice) {
            state.withLock { state in
                state.count += 1
                guard let tags = notice.tags, !tags.contains(where: { $0.hasPrefix("m:") }) else {
                    state.anyZone = state.count
                    state.zones = [:]
                    return
                }
                for tag in tags where tag.hasPrefix("z:") { state.zones[String(tag.dropFirst(2))] = state.count }
                if state.zones.count > Self.capacity {
                    state.anyZone = state.count
                    state.zones = [:]
                }
            }
        }

        /// The answer kept for `key`, if nothing may have changed in `zone` since it was read.
        func answer(_ key: Key, zone: CloudZone) -> GatewayWire.Batch? {
            let tag = backend.tag(of: zone.description)
            // While the listener reconnects, a change would send no notice.
            guard backend.isListening else { return nil }
            return state.withLock { state -> GatewayWire.Batch? in
                guard state.following, let kept = state.kept[key] else { return nil }
                let elapsed = ContinuousClock.now - kept.stamp.at
                let stale =
                    kept.zone != tag || state.anyZone > kept.stamp.count || (tag.flatMap { state.zones[$0] } ?? 0) > kept.stamp.count
                    || elapsed > .seconds(Self.lifetime) || (tag == nil && state.count > kept.stamp.count)
                guard !stale else {
                    state.kept[key] = nil
                    return nil
                }
                var answer = kept.answer
                let (seconds, attoseconds) = elapsed.components
                answer.history?.now += Double(seconds) + Double(attoseconds) / 1e18
                return answer
            }
        }

        /// The stamp of a read about to start.
        func stamp() -> Stamp { state.withLock { Stamp(count: $0.count, at: .now) } }

        /// Keeps `answer`, read with `stamp`, if it found nothing new.
        func keep(_ answer: GatewayWire.Batch, for key: Key, zone: CloudZone, stamp: Stamp) {
            guard answer.changed.isEmpty, answer.deleted.isEmpty, answer.movedOut?.isEmpty ?? true, !answer.moreComing, !answer.heldBack,
                answer.history?.keepsMark ?? true
            else { return }
            let tag = backend.tag(of: zone.description)
            state.withLock { state in
                guard state.following else { return }
                if state.kept.count >= Self.capacity { state.kept = [:] }
                state.kept[key] = Kept(zone: tag, stamp: stamp, answer: answer)
            }
        }
    }
#endif  // Gateway
