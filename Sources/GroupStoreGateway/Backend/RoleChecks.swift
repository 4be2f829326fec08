#if Gateway
    import Foundation
    import GroupStoreCloud
    import Synchronization

    /// The roles a gateway found fit to act as lately: a role is checked (its
    /// account: granted `groupstore_user`, not bypassing row-level security)
    /// before its first request, and again once its check is `lifetime`
    /// seconds old, so that an operator's mistake (granting the authenticator
    /// a superuser role) never lets a request run past row-level security,
    /// while a busy role's requests cost one check every few seconds, not one each.
    ///
    /// The lifetime is the window of a change made to a role meanwhile: a role
    /// made `BYPASSRLS` (or whose `groupstore_user` is revoked) is acted as
    /// for at most ``defaultLifetime`` more seconds, by each gateway.
    final class RoleChecks: Sendable {
        /// How long a passed check is trusted (5 s: a check is one short
        /// transaction, and a mistake on a role is trusted no longer).
        static let defaultLifetime: TimeInterval = 5

        private let lifetime: TimeInterval
        private let passed = Mutex<[String: Date]>([:])
        /// The most roles remembered (beyond it, the oldest half is forgotten).
        private let capacity = 100_000

        init(lifetime: TimeInterval = RoleChecks.defaultLifetime) {
            self.lifetime = lifetime
        }

        /// Runs `check` unless `role` passed it less than `lifetime` ago.
        /// - Throws: what `check` threw (the role is not remembered then).
        func ensure(_ role: String, now: Date = Date(), _ check: () async throws -> Void) async throws {
            let fresh = passed.withLock { passed in passed[role].map { now.timeIntervalSince($0) < lifetime } ?? false }
            guard !fresh else { return }
            try await check()
            passed.withLock { passed in
                if passed.count >= capacity {
                    let oldest = passed.sorted { $0.value < $1.value }.prefix(capacity / 2).map(\.key)
                    for key in oldest { passed[key] = nil }
                }
                passed[role] = now
            }
        }
    }
#endif  // Gateway
