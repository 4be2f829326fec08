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
    ///
    /// A role's check is made once at a time: requests that find it due while
    /// it is being made wait for it rather than each making their own (a
    /// busy role's requests all find it due at the same moment). A refusal
    /// (a ``CloudSyncError`` that is not transient) is the answer for all of
    /// them. Any other failure (the deadline of the request that made the
    /// check, say) has the check made again once for those that waited,
    /// shared likewise; whoever waited for that one too and saw it fail checks
    /// alone. (``FetchMemory`` shares a failed read's second try the same way.)
    final class RoleChecks: Sendable {
        /// How long a passed check is trusted (5 s: a check is one short
        /// transaction, and a mistake on a role is trusted no longer).
        static let defaultLifetime: TimeInterval = 5

        private struct State {
            var passed: [String: Date] = [:]
            /// The checks being made, by role.
            var running: [String: Task<Void, any Error>] = [:]
            /// How many requests wait for each running check.
            var waiting: [String: Int] = [:]
        }

        private let lifetime: TimeInterval
        private let state = Mutex(State())
        /// The most roles remembered (beyond it, the oldest half is forgotten).
        private let capacity = 100_000

        init(lifetime: TimeInterval = RoleChecks.defaultLifetime) {
            self.lifetime = lifetime
        }

        /// Runs `check` unless `role` passed it less than `lifetime` ago, or
        /// waits for the one being made.
        /// - Parameter again: whether a shared check this request waited for failed already.
        /// - Throws: what `check` threw (the role is not remembered then), or
        ///   the refusal of the check this request waited for.
        func ensure(
            _ role: String, now: Date = Date(), again: Bool = false, _ check: @escaping @Sendable () async throws -> Void
        ) async throws {
            enum Next {
                case fresh
                case wait(Task<Void, any Error>)
                case make(Task<Void, any Error>)
            }
            let next = state.withLock { state -> Next in
                if let passed = state.passed[role], now.timeIntervalSince(passed) < lifetime { return .fresh }
                if let running = state.running[role] {
                    state.waiting[role, default: 0] += 1
                    return .wait(running)
                }
                // Unstructured, so a waiter is not cancelled with the request that started it. It
                // ends its own entry, so that a waiter that saw it fail and asks again finds it gone.
                let task = Task {
                    do {
                        try await check()
                        self.ended(role, passedAt: now)
                    } catch {
                        self.ended(role, passedAt: nil)
                        throw error
                    }
                }
                state.running[role] = task
                return .make(task)
            }
            switch next {
            case .fresh:
                return
            case .make(let task):
                try await task.value
            case .wait(let running):
                let result = await running.result
                state.withLock { state in
                    state.waiting[role, default: 1] -= 1
                    if state.waiting[role] == 0 { state.waiting[role] = nil }
                }
                guard case .failure(let error) = result else { return }
                if let refusal = error as? CloudSyncError, !refusal.isTransient { throw refusal }
                if again { return try await check() }
                // Now, not when this request came: a check made now passes now.
                try await ensure(role, again: true, check)
            }
        }

        /// A check of `role` ended: it passed at `passedAt`, or failed (`nil`).
        private func ended(_ role: String, passedAt: Date?) {
            state.withLock { state in
                state.running[role] = nil
                guard let passedAt else { return }
                if state.passed.count >= capacity {
                    let oldest = state.passed.sorted { $0.value < $1.value }.prefix(capacity / 2).map(\.key)
                    for key in oldest { state.passed[key] = nil }
                }
                state.passed[role] = passedAt
            }
        }

        /// How many requests wait for `role`'s running check.
        func waiting(_ role: String) -> Int { state.withLock { $0.waiting[role] ?? 0 } }
    }
#endif  // Gateway
