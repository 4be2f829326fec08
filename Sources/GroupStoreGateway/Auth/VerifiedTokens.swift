#if Gateway
    import Foundation
    import Synchronization

    /// The identities of tokens verified lately, so that a client's every
    /// request does not verify its token again: the signature, the
    /// base64url and the JSON of a token took about a tenth of the gateway's
    /// CPU (`perf`, one-record fetches).
    ///
    /// What a token proves depends only on its bytes and the gateway's keys,
    /// which do not change while it runs; its time does: a kept identity is
    /// taken only while its token has not expired (with the verifier's
    /// leeway), and its `nbf`, passed when it was verified, stays passed.
    /// A token not kept, expired, or refused goes to the verifier, whose
    /// refusal says why. At ``capacity`` tokens the memory is emptied.
    final class VerifiedTokens: Sendable {
        /// The most tokens kept.
        static let capacity = 10_000

        private let verifier: TokenVerifier
        private let kept = Mutex<[String: GatewayIdentity]>([:])

        init(verifier: TokenVerifier) { self.verifier = verifier }

        /// The identity `token` proves (``TokenVerifier/verify(_:now:)``).
        func identity(_ token: String, now: Date = Date()) throws -> GatewayIdentity {
            if let identity = kept.withLock({ $0[token] }), identity.isValid(at: now, leeway: verifier.leeway) {
                return identity
            }
            let identity = try verifier.verify(token, now: now)
            kept.withLock { kept in
                if kept.count >= Self.capacity { kept = [:] }
                kept[token] = identity
            }
            return identity
        }
    }

    extension GatewayIdentity {
        /// Whether its token has not expired at `now` (a token without `exp` never does).
        fileprivate func isValid(at now: Date, leeway: TimeInterval) -> Bool {
            guard let expiresAt else { return true }
            return expiresAt.timeIntervalSince1970 + leeway >= now.timeIntervalSince1970
        }
    }
#endif  // Gateway
