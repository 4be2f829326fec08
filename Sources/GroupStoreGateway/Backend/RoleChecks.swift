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
    /// busy role's requests all find it due at the same moment). When it
    /// fails, each of them makes its own (the first one's deadline may have
    /// been all that failed).
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
        /// - Throws: what `check` threw (the role is not remembered then).
        func ensure(_ role: String, now: Date = Date(), _ check: @escaping @Sendable () async throws -> Void) async throws {
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
                // Unstructured, so a waiter is not cancelled with the request that started it.
                let task = Task { try await check() }
                state.running[role] = task
                return .make(task)
            }
            switch next {
            case .fresh:
                return
            case .wait(let running):
                let passed = (try? await running.value) != nil
                state.withLock { state in
                    state.waiting[role, default: 1] -= 1
                    if state.waiting[role] == 0 { state.waiting[role] = nil }
                }
                if !passed { try await check() }
            case .make(let task):
                let result = await task.result
                state.withLock { state in
                    state.running[role] = nil
                    guard case .success = result else { return }
                    if state.passed.count >= capacity {
                        let oldest = state.passed.sorted { $0.value < $1.value }.prefix(capacity / 2).map(\.key)
                        for key in oldest { state.passed[key] = nil }
                    }
                    state.passed[role] = now
                }
                try result.get()
            }
        }

        /// How many requests wait for `role`'s running check.
        func waiting(_ role: String) -> Int { state.withLock { $0.waiting[role] ?? 0 } }
    }
#endif  // Gateway
