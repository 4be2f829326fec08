#if Gateway && Postgres
    import Foundation
    @testable import GroupStoreCloudHTTP
    import PostgresTestServer
    import Subprocesses
    import Synchronization
    import XCTest

    @testable import GroupStoreCloud

    /// A client's next fetch, made by the gateway when its zone changes and
    /// sent with the hint (``GatewayWire/Prefetch``): through a real gateway
    /// process, with `psql` as the outside writer.
    final class GatewayPrefetchTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .gateway }
        let notes = CloudTestCase.titledNotes

        let zone = CloudZone.private("alice")

        /// Alice's remote, her zone fetched to its end (which arms the
        /// prefetch), her push connection subscribed to it; the messages it
        /// receives, and her token.
        func subscribedAlice() async throws -> (GatewayRemote, AsyncStream<GatewayWire.PushMessage>, CloudChangeToken) {
            let alice = try gatewayRemote(user: "alice")
            try await alice.prepare([notes])
            let messages = alice.pushMessages.stream(bufferingNewest: 1000)
            let page = try await alice.fetchChanges(in: zone, since: nil, limit: 100)
            XCTAssertFalse(page.moreComing)
            _ = try await deadline(30, "alice's subscription") { [zone] () -> Bool? in
                for await message in messages where message.type == .subscribed && message.zones == [zone.description] { return true }
                return nil
            }
            return (alice, messages, page.token)
        }

        /// The next hint alice's connection receives.
        func nextHint(_ messages: AsyncStream<GatewayWire.PushMessage>, _ what: String) async throws -> GatewayWire.PushMessage {
            try await deadline(30, what) { () -> GatewayWire.PushMessage? in
                for await message in messages where message.type == .hint { return message }
                return nil
            }
        }

        /// Rows written with psql as alice until a hint carries its page (the
        /// prefetch frame may reach the gateway just after the subscription's
        /// reply: a hint without a page is fetched, which arms it again): the
        /// hint, and the token its page was asked from.
        func pushedPage(
            _ alice: GatewayRemote, _ messages: AsyncStream<GatewayWire.PushMessage>, since first: CloudChangeToken
        ) async throws -> (hint: GatewayWire.PushMessage, since: CloudChangeToken) {
            var token = first
            for attempt in 1...5 {
                try server.psql("INSERT INTO notes (id, title) VALUES ('p\(attempt)', 'by psql')", as: "alice")
                let hint = try await nextHint(messages, "the hint of psql's row p\(attempt)")
                if hint.answer != nil { return (hint, token) }
                var page = try await alice.fetchChanges(in: zone, since: token, limit: 100)
                while page.moreComing { page = try await alice.fetchChanges(in: zone, since: page.token, limit: 100) }
                token = page.token
            }
            XCTFail("no hint carried a page in 5 writes")
            throw CancellationError()
        }

        func testAChangeInAFetchedZone_comesWithItsPage_andTheFetchSendsNoRequest() async throws {
            let (alice, messages, first) = try await subscribedAlice()
            let (hint, since) = try await pushedPage(alice, messages, since: first)
            XCTAssertEqual(hint.zones, [zone.description])
            XCTAssertEqual(hint.prefetch?.fetch.token, since, "the page answers the fetch alice would make next")
            let written = hint.answer?.changed.map(\.id.name) ?? []
            XCTAssertEqual(written.count, 1, "the page holds psql's row: \(written)")
            XCTAssertEqual(hint.answer?.changed.first?.fields["title"], .text("by psql"))

            // The gateway stopped: the fetch is answered by the page, with no request.
            let gateway = gateways[0].process
            gateway.send(SIGSTOP)
            defer { gateway.send(SIGCONT) }
            let page = try await deadline(10, "the fetch answered by the page the hint carried (the gateway is stopped)") { [zone] in
                try await alice.fetchChanges(in: zone, since: since, limit: 100)
            }
            XCTAssertEqual(page.changed.map(\.id.name), written)
            XCTAssertEqual(page.token, hint.answer?.token)
        }

        /// A fetch that keeps a mark (as the bridge's do) takes the page too,
        /// asking about the mark it was asked for or about the head of the
        /// history the page was read in; its remote clock is not fresh.
        func testAFetchKeepingAMark_takesThePage_withAClockNotToMeasure() async throws {
            let alice = try gatewayRemote(user: "alice")
            try await alice.prepare([notes])
            let messages = alice.pushMessages.stream(bufferingNewest: 1000)
            let first = try await alice.fetchChanges(in: zone, since: nil, limit: 100, keeping: nil)
            let start = try XCTUnwrap(first.value)
            XCTAssertTrue(first.history.nowIsFresh, "a request's answer measures the clock")
            _ = try await deadline(30, "alice's subscription") { [zone] () -> Bool? in
                for await message in messages where message.type == .subscribed && message.zones == [zone.description] { return true }
                return nil
            }
            var (token, mark) = (start.token, first.history.head)
            for attempt in 1...5 {
                try server.psql("INSERT INTO notes (id, title) VALUES ('m\(attempt)', 'by psql')", as: "alice")
                let hint = try await nextHint(messages, "the hint of psql's row m\(attempt)")
                guard let page = hint.answer, let read = page.history else {
                    let fetched = try await alice.fetchChanges(in: zone, since: token, limit: 100, keeping: mark)
                    (token, mark) = (try XCTUnwrap(fetched.value).token, fetched.history.head)
                    continue
                }
                XCTAssertEqual(hint.prefetch?.fetch.history?.mark, mark, "the prefetch asks about the mark of alice's last fetch")
                // Alice's mark moved to the head the page was read at (another zone's page of the
                // same commit would move it so): the page answers that too, the gateway stopped.
                let gateway = gateways[0].process
                gateway.send(SIGSTOP)
                defer { gateway.send(SIGCONT) }
                let taken = try await deadline(10, "the fetch keeping the page's head, answered by the page") { [zone, token] in
                    try await alice.fetchChanges(in: zone, since: token, limit: 100, keeping: read.head)
                }
                XCTAssertEqual(try XCTUnwrap(taken.value).changed.map(\.id.name), ["m\(attempt)"])
                XCTAssertTrue(taken.history.keepsMark)
                XCTAssertFalse(taken.history.nowIsFresh, "a page read before the call does not measure the clock")
                return
            }
            XCTFail("no hint carried a page in 5 writes")
        }

        func testAChangeAfterThePageWasRead_dropsIt_andTheFetchAsksTheGateway() async throws {
            let (alice, messages, first) = try await subscribedAlice()
            let (hint, since) = try await pushedPage(alice, messages, since: first)
            let paged = hint.answer?.changed.map(\.id.name) ?? []
            // The prefetch was made once: the next change is a hint naming the zone, without a page.
            try server.psql("INSERT INTO notes (id, title) VALUES ('later', 'after the page')", as: "alice")
            let later = try await nextHint(messages, "the hint of the row written after the page")
            XCTAssertNil(later.answer)
            XCTAssertEqual(later.zones, [zone.description])
            let page = try await alice.fetchChanges(in: zone, since: since, limit: 100)
            XCTAssertEqual(Set(page.changed.map(\.id.name)), Set(paged + ["later"]), "the fetch saw the later row too")
        }

        func testTheClientsOwnWrite_dropsThePage() async throws {
            let (alice, messages, first) = try await subscribedAlice()
            let (hint, since) = try await pushedPage(alice, messages, since: first)
            let paged = hint.answer?.changed.map(\.id.name) ?? []
            let own = CloudRecordID(zone: zone, type: "notes", name: "mine")
            _ = try await alice.modify([.save(id: own, baseTag: nil, fields: ["title": .text("hers")], editedAt: Date())])
            let page = try await alice.fetchChanges(in: zone, since: since, limit: 100)
            XCTAssertEqual(Set(page.changed.map(\.id.name)), Set(paged + ["mine"]), "the fetch after her own write read it")
        }

        /// A page larger than a push frame goes without it: the hint names
        /// the zone and the client fetches.
        func testAPageLargerThanAFrame_isNotSent_theClientFetches() async throws {
            let (alice, messages, first) = try await subscribedAlice()
            let (_, since) = try await pushedPage(alice, messages, since: first)
            var token = since
            var page = try await alice.fetchChanges(in: zone, since: token, limit: 100)
            token = page.token
            let large = String(repeating: "x", count: GatewayWire.maxPushBytes + 1)
            try server.psql("INSERT INTO notes (id, title) VALUES ('large', '\(large)')", as: "alice")
            let hint = try await nextHint(messages, "the hint of the large row")
            XCTAssertNil(hint.answer, "a page of \(large.count) bytes went in a push frame")
            XCTAssertEqual(hint.zones, [zone.description])
            page = try await alice.fetchChanges(in: zone, since: token, limit: 100)
            XCTAssertEqual(page.changed.map(\.id.name), ["large"])
            XCTAssertEqual(page.changed.first?.fields["title"], .text(large))
        }

        /// A prefetch names a zone, and the gateway makes it only for a zone
        /// the connection subscribed to (which its role may read): bob's
        /// prefetch of alice's zone is never made.
        func testAPrefetchOfAZoneTheRoleDoesNotRead_isNeverMade() async throws {
            let alice = try gatewayRemote(user: "alice")
            try await alice.prepare([notes])
            let bob = try gatewayRemote(user: "bob")
            let messages = bob.pushMessages.stream(bufferingNewest: 1000)
            _ = try await bob.fetchChanges(in: .private("bob"), since: nil, limit: 100)
            _ = try await deadline(30, "bob's subscription") { () -> Bool? in
                for await message in messages where message.type == .subscribed && message.zones == ["private/bob"] { return true }
                return nil
            }
            // Bob's client asks the gateway to fetch alice's zone for him.
            let forged = GatewayWire.Prefetch(fetch: GatewayWire.FetchRequest(zone: zone, token: nil, limit: 100), subscription: nil)
            bob.armed.withLock { $0[zone] = (forged, false) }
            bob.zonesChanged.yield(())
            try server.psql("INSERT INTO notes (id, title) VALUES ('secret', 'alice only')", as: "alice")
            // Then a row in bob's own zone: its hint comes after anything alice's row could have caused.
            try server.psql("INSERT INTO notes (id, title) VALUES ('b1', 'bob''s')", as: "bob")
            let received = try await deadline(30, "the hint of bob's own row") { () -> [GatewayWire.PushMessage]? in
                var received: [GatewayWire.PushMessage] = []
                for await message in messages {
                    received.append(message)
                    if message.type == .hint,
                        message.zones == ["private/bob"] || message.answer?.changed.contains(where: { $0.id.name == "b1" }) == true
                    {
                        return received
                    }
                }
                return nil
            }
            let leaked = received.flatMap { $0.answer?.changed ?? [] }.filter { $0.id.zone == zone }
            XCTAssertEqual(leaked.map(\.id.name), [], "bob received alice's rows")
            XCTAssertFalse(received.contains { $0.prefetch?.fetch.zone == zone }, "the gateway made bob's prefetch of alice's zone")
        }
    }
#endif  // Gateway && Postgres
