#if Gateway
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import ServiceLifecycle
    import Synchronization
    import XCTest

    @testable import GroupStoreGateway

    /// The rules of ``GroupStoreGateway/FetchMemory`` one by one, on a
    /// backend whose notices the test sends (every zone has a tag): what is
    /// shared, what makes it stale, and when a device may take it.
    final class FetchMemoryTests: XCTestCase {
        /// A memory backend whose zones have tags (the zone's own name), so notices name them.
        final class TaggedBackend: GatewayBackend {
            let inner = MemoryGatewayBackend()
            var displayName: String { "tagged" }
            func run() async throws {}
            func acting(as identity: GatewayIdentity, origin: String?) -> any GatewayRoleDatabase {
                inner.acting(as: identity, origin: origin)
            }
            func notices() -> AsyncStream<GatewayNotice> { AsyncStream { $0.finish() } }
            func tag(of text: String) -> String? { text }
            func isReady() async -> Bool { true }
            var isListening: Bool { true }
            var poolUse: (leases: Int, size: Int) { (0, 1) }
        }

        /// Counts the database reads a fetch makes.
        final class Reads: Sendable {
            let count = Mutex(0)
            func read() -> GatewayWire.Batch {
                count.withLock { $0 += 1 }
                return GatewayWire.Batch(
                    CloudChangeBatch(changed: [], deleted: [], token: CloudChangeToken("t"), moreComing: false), heldBack: false)
            }
        }

        let zone = CloudZone.shared(owner: "device+a", name: "crew")
        let memory = FetchMemory(backend: TaggedBackend())
        let reads = Reads()

        override func setUp() { memory.follow(true) }

        func key(_ identity: GatewayIdentity) throws -> FetchMemory.Key {
            try FetchMemory.Key(identity: identity, endpoint: "/v1/fetch", request: ["zone": zone.description], subscription: .init())
        }

        func fetch(_ identity: GatewayIdentity, mayRead: Bool = true) async throws -> Bool {
            let reads = self.reads
            return try await memory.answer(
                try key(identity), zone: zone, identity: identity, mayRead: { mayRead }, read: { reads.read() }
            ).fromMemory
        }

        static func device(_ name: String) -> GatewayIdentity { GatewayIdentity(role: "groupstore_device", device: name) }

        func testAWriteThroughTheGateway_makesTheNextFetchOfItsZoneRead_beforeItsNotice() async throws {
            let alice = GatewayIdentity(role: "alice")
            let first = try await fetch(alice)
            let second = try await fetch(alice)
            XCTAssertEqual([first, second], [false, true], "read once, then kept")
            memory.wrote([zone])
            let afterWrite = try await fetch(alice)
            XCTAssertFalse(afterWrite, "the zone written: read again")
            memory.wrote([.public])
            let afterOtherZone = try await fetch(alice)
            XCTAssertTrue(afterOtherZone, "a write of another zone leaves it kept")
            XCTAssertEqual(reads.count.withLock { $0 }, 2)
        }

        func testADevice_takesASharedAnswerOnlyWhereTheDatabaseSaidItMayRead() async throws {
            let (a, b) = (Self.device("a"), Self.device("b"))
            let readByA = try await fetch(a)
            XCTAssertFalse(readByA)
            let refused = try await fetch(b, mayRead: false)
            XCTAssertFalse(refused, "b may not read the zone: its own read, never a's answer")
            let proven = try await fetch(b)
            XCTAssertTrue(proven, "b may: a's answer")
            XCTAssertEqual(reads.count.withLock { $0 }, 2)

            // Anyone's shares change: the proof is gone, and the database is asked again.
            memory.note(GatewayNotice(origin: "", tags: ["m:device+b"]))
            let afterShares = try await fetch(b, mayRead: false)
            XCTAssertFalse(afterShares)
            XCTAssertEqual(reads.count.withLock { $0 }, 3)
        }

        func testAProofAskedWhileSharesChanged_isNotUsed() async throws {
            let (a, b) = (Self.device("a"), Self.device("b"))
            _ = try await fetch(a)
            let (memory, reads, zone, keyA) = (self.memory, self.reads, self.zone, try key(a))
            // While the database is asked whether b may read, the shares change (b removed,
            // say) and a reads the zone again: a fresh answer that b's old "yes" must not reach.
            let answer = try await memory.answer(
                try key(b), zone: zone, identity: b,
                mayRead: {
                    memory.note(GatewayNotice(origin: "", tags: ["m:device+b"]))
                    let again = try await memory.answer(keyA, zone: zone, identity: a, mayRead: { true }, read: { reads.read() })
                    XCTAssertFalse(again.fromMemory, "a reads after the change of shares")
                    return true
                }, read: { reads.read() })
            XCTAssertFalse(answer.fromMemory, "a proof older than a change of shares: b reads for itself")
            XCTAssertEqual(reads.count.withLock { $0 }, 3)
        }

        /// A shared read that fails (the deadline of the request that
        /// started it, say) is made again once for the fetches that waited
        /// for it, not once by each of them.
        func testAFailedSharedRead_isMadeAgainOnce_forTheFetchesThatWaitedForIt() async throws {
            let alice = GatewayIdentity(role: "alice")
            let (memory, reads, zone, key) = (self.memory, self.reads, self.zone, try key(alice))
            let (failing, fail) = AsyncStream<Void>.makeStream()
            let started = Mutex(false)
            let first = Task {
                try await memory.answer(
                    key, zone: zone, identity: alice, mayRead: { true },
                    read: {
                        started.withLock { $0 = true }
                        for await _ in failing { break }
                        throw CloudSyncError(.transient, "the request's deadline passed")
                    })
            }
            try await waitUntil("the first fetch's read to start") { started.withLock { $0 } }
            let waiting = (0..<5).map { _ in
                Task { try await memory.answer(key, zone: zone, identity: alice, mayRead: { true }, read: { reads.read() }) }
            }
            try await waitUntil("five fetches to wait for that read") { memory.joined(key) == 5 }
            fail.yield()
            do {
                _ = try await first.value
                XCTFail("the fetch whose own read failed is answered with its error")
            } catch let error as CloudSyncError {
                XCTAssertEqual(error.code, .transient)
            }
            var fromMemory = 0
            for task in waiting where try await task.value.fromMemory { fromMemory += 1 }
            XCTAssertEqual(reads.count.withLock { $0 }, 1, "the five fetches made one read again, not five")
            XCTAssertEqual(fromMemory, 4, "four took the answer of the one that read")
        }

        func testANoticeOfTheZone_makesAKeptAnswerStale_andAnotherZonesDoesNot() async throws {
            let alice = GatewayIdentity(role: "alice")
            _ = try await fetch(alice)
            memory.note(GatewayNotice(origin: "", tags: ["z:public"]))
            let kept = try await fetch(alice)
            XCTAssertTrue(kept)
            memory.note(GatewayNotice(origin: "", tags: ["z:" + zone.description]))
            let stale = try await fetch(alice)
            XCTAssertFalse(stale)
            memory.note(GatewayNotice(origin: "", tags: nil))
            let anyZone = try await fetch(alice)
            XCTAssertFalse(anyZone, "a notice of any zone")
        }
    }
#endif  // Gateway
