#if Gateway
    import Foundation
    import GroupStoreCloud
    import Synchronization
    import XCTest

    @testable import GroupStoreGateway

    /// ``GroupStoreGateway/RoleChecks``: a role is checked before its first
    /// request and once its check is old, once at a time.
    final class RoleChecksTests: XCTestCase {
        /// Counts the checks made, each held until the test lets it end.
        final class Checks: Sendable {
            let made = Mutex(0)
            let (ends, end) = AsyncStream<Bool>.makeStream()

            /// A check that passes or fails when the test says.
            func held() async throws {
                made.withLock { $0 += 1 }
                for await passes in ends {
                    if passes { return }
                    throw CloudSyncError(.transient, "the request's deadline passed")
                }
            }

            /// A check that passes at once.
            func quick() async throws { made.withLock { $0 += 1 } }

            var count: Int { made.withLock { $0 } }
        }

        func testACheckDueForManyRequests_isMadeOnce_andTheOthersWaitForIt() async throws {
            let (roleChecks, checks) = (RoleChecks(), Checks())
            let first = Task { try await roleChecks.ensure("device") { try await checks.held() } }
            try await waitUntil("the first request's check to start") { checks.count == 1 }
            let others = (0..<5).map { _ in Task { try await roleChecks.ensure("device") { try await checks.quick() } } }
            try await waitUntil("five requests to wait for that check") { roleChecks.waiting("device") == 5 }
            checks.end.yield(true)
            try await first.value
            for other in others { try await other.value }
            XCTAssertEqual(checks.count, 1, "one check for the six requests")
            try await roleChecks.ensure("device") { try await checks.quick() }
            XCTAssertEqual(checks.count, 1, "a passed check is trusted for its lifetime")
            try await roleChecks.ensure("device", now: Date() + RoleChecks.defaultLifetime + 1) { try await checks.quick() }
            XCTAssertEqual(checks.count, 2, "and made again once it is older")
        }

        func testAFailedCheck_failsItsRequest_andEachWaitingRequestChecksForItself() async throws {
            let (roleChecks, checks) = (RoleChecks(), Checks())
            let first = Task { try await roleChecks.ensure("device") { try await checks.held() } }
            try await waitUntil("the first request's check to start") { checks.count == 1 }
            let others = (0..<3).map { _ in Task { try await roleChecks.ensure("device") { try await checks.quick() } } }
            try await waitUntil("three requests to wait for that check") { roleChecks.waiting("device") == 3 }
            checks.end.yield(false)
            do {
                try await first.value
                XCTFail("the request whose check failed fails with its error")
            } catch let error as CloudSyncError {
                XCTAssertEqual(error.code, .transient)
            }
            for other in others { try await other.value }
            XCTAssertEqual(checks.count, 4, "the three waiting requests each checked for itself")
            XCTAssertEqual(roleChecks.waiting("device"), 0)
        }

        func testRoles_areCheckedApart() async throws {
            let (roleChecks, checks) = (RoleChecks(), Checks())
            let first = Task { try await roleChecks.ensure("alice") { try await checks.held() } }
            try await waitUntil("alice's check to start") { checks.count == 1 }
            try await roleChecks.ensure("bob") { try await checks.quick() }
            XCTAssertEqual(checks.count, 2, "bob's request did not wait for alice's check")
            checks.end.yield(true)
            try await first.value
        }
    }
#endif  // Gateway
