#if Gateway
    import Foundation
    import GroupStoreCloud
    import Synchronization
    import XCTest

    @testable import GroupStoreGateway

    /// ``GroupStoreGateway/RoleChecks``: a role is checked before its first
    /// request and once its check is old, once at a time.
    final class RoleChecksTests: XCTestCase {
        /// Counts the checks made; the first `held` of them are each held
        /// until the test lets it pass or fail.
        final class Checks: Sendable {
            let held: Int
            let failure: CloudSyncError
            let made = Mutex(0)
            let (ends, end) = AsyncStream<Bool>.makeStream()

            init(held: Int = 1, failure: CloudSyncError = CloudSyncError(.transient, "the request's deadline passed")) {
                self.held = held
                self.failure = failure
            }

            /// A check: held (passing or failing with `failure` when the test
            /// says) if it is one of the first `held`, else passing at once.
            func check() async throws {
                let number = made.withLock { made in
                    made += 1
                    return made
                }
                guard number <= held else { return }
                for await passes in ends {
                    if passes { return }
                    throw failure
                }
            }

            var count: Int { made.withLock { $0 } }
        }

        /// Starts a request's check held until the test ends it, and `waiters`
        /// requests that wait for it (`again`: each saw a shared check fail before).
        func startHeldCheck(
            _ roleChecks: RoleChecks, _ checks: Checks, waiters: Int, again: Bool = false
        ) async throws -> (first: Task<Void, any Error>, waiters: [Task<Void, any Error>]) {
            let first = Task { try await roleChecks.ensure("device") { try await checks.check() } }
            try await waitUntil("the first request's check to start") { checks.count == 1 }
            let others = (0..<waiters).map { _ in Task { try await roleChecks.ensure("device", again: again) { try await checks.check() } }
            }
            try await waitUntil("\(waiters) requests to wait for that check") { roleChecks.waiting("device") == waiters }
            return (first, others)
        }

        func testACheckDueForManyRequests_isMadeOnce_andTheOthersWaitForIt() async throws {
            let (roleChecks, checks) = (RoleChecks(), Checks())
            let (first, others) = try await startHeldCheck(roleChecks, checks, waiters: 5)
            checks.end.yield(true)
            try await first.value
            for other in others { try await other.value }
            XCTAssertEqual(checks.count, 1, "one check for the six requests")
            try await roleChecks.ensure("device") { try await checks.check() }
            XCTAssertEqual(checks.count, 1, "a passed check is trusted for its lifetime")
            try await roleChecks.ensure("device", now: Date() + RoleChecks.defaultLifetime + 1) { try await checks.check() }
            XCTAssertEqual(checks.count, 2, "and made again once it is older")
        }

        func testACheckThatFailedTransiently_failsItsRequest_andIsMadeAgainOnceForTheWaitingOnes() async throws {
            let (roleChecks, checks) = (RoleChecks(), Checks())
            let (first, others) = try await startHeldCheck(roleChecks, checks, waiters: 3)
            checks.end.yield(false)
            do {
                try await first.value
                XCTFail("the request whose check failed fails with its error")
            } catch let error as CloudSyncError {
                XCTAssertEqual(error.code, .transient)
            }
            for other in others { try await other.value }
            XCTAssertEqual(checks.count, 2, "one check again for the three waiting requests, not one each")
            XCTAssertEqual(roleChecks.waiting("device"), 0)
        }

        func testARefusal_isTheAnswerForEveryWaitingRequest() async throws {
            let refusal = CloudSyncError(.unauthorized, "role device bypasses row-level security: the gateway does not act as it")
            let (roleChecks, checks) = (RoleChecks(), Checks(failure: refusal))
            let (first, others) = try await startHeldCheck(roleChecks, checks, waiters: 3)
            checks.end.yield(false)
            for request in [first] + others {
                do {
                    try await request.value
                    XCTFail("a request of a refused role was let through")
                } catch let error as CloudSyncError {
                    XCTAssertEqual(error.code, .unauthorized)
                }
            }
            XCTAssertEqual(checks.count, 1, "the refusal was not asked for again")
        }

        func testARequestThatSawASharedCheckFailTwice_checksAlone() async throws {
            let (roleChecks, checks) = (RoleChecks(), Checks(held: 2))
            let (first, waiting) = try await startHeldCheck(roleChecks, checks, waiters: 1, again: true)
            checks.end.yield(false)
            _ = await first.result
            try await waitUntil("the request that had waited twice to make its own check") { checks.count == 2 }
            // Its check is its own: a request coming meanwhile does not wait for it.
            let next = Task { try await roleChecks.ensure("device") { try await checks.check() } }
            try await waitUntil("the next request to make a check of its own") { checks.count == 3 }
            try await next.value
            checks.end.yield(true)
            try await waiting[0].value
        }

        func testRoles_areCheckedApart() async throws {
            let (roleChecks, checks) = (RoleChecks(), Checks())
            let first = Task { try await roleChecks.ensure("alice") { try await checks.check() } }
            try await waitUntil("alice's check to start") { checks.count == 1 }
            try await roleChecks.ensure("bob") { try await checks.check() }
            XCTAssertEqual(checks.count, 2, "bob's request did not wait for alice's check")
            checks.end.yield(true)
            try await first.value
        }
    }
#endif  // Gateway
