#if Gateway && Postgres
    import Foundation
    @testable import GroupStoreCloudHTTP
    import NIOHTTP1
    import PostgresTestServer
    import Subprocesses
    import XCTest

    @testable import GroupStoreCloud

    /// Saves sent on the push connection (``PushSaves``): through a real
    /// gateway process, with `psql` as the outside observer.
    final class GatewayPushSaveTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .gateway }
        let notes = CloudTestCase.titledNotes

        /// `user`'s remote with its push connection subscribed to its zone,
        /// and the messages it receives from then on.
        func subscribed(_ user: String) async throws -> (GatewayRemote, AsyncStream<GatewayWire.PushMessage>) {
            let remote = try gatewayRemote(user: user)
            try await remote.prepare([notes])
            let messages = remote.pushMessages.stream(bufferingNewest: 1000)
            _ = try await remote.fetchChanges(in: .private(user), since: nil, limit: 100)
            let subscribed = try await deadline(30, "\(user)'s subscription") { () -> GatewayWire.PushMessage? in
                for await message in messages where message.type == .subscribed && message.zones == ["private/\(user)"] { return message }
                return nil
            }
            XCTAssertEqual(subscribed.saves, true, "the gateway says it takes saves on the connection")
            return (remote, messages)
        }

        func note(_ name: String, in zone: CloudZone, _ title: String) -> CloudRecordChange {
            .save(id: CloudRecordID(zone: zone, type: "notes", name: name), baseTag: nil, fields: ["title": .text(title)], editedAt: Date())
        }

        /// The `saved` frame received next.
        func nextSaved(_ messages: AsyncStream<GatewayWire.PushMessage>, _ what: String) async throws -> GatewayWire.PushMessage {
            try await deadline(30, what) { () -> GatewayWire.PushMessage? in
                for await message in messages where message.type == .saved { return message }
                return nil
            }
        }

        func testASave_goesOnThePushConnection_andIsCommitted() async throws {
            let (alice, messages) = try await subscribed("alice")
            let checked = try await alice.modify([note("s1", in: .private("alice"), "it's ✓")], keeping: nil)
            guard case .saved(let record)? = checked.value?.first else { return XCTFail("not saved: \(String(describing: checked.value))") }
            XCTAssertEqual(record.fields["title"], .text("it's ✓"))
            let saved = try await nextSaved(messages, "the save's answer on the push connection")
            XCTAssertEqual(saved.saved?.results?.first?.kind, .saved)
            XCTAssertEqual(saved.saved?.history.head, checked.history.head)
            XCTAssertEqual(try server.psql("SELECT title FROM notes WHERE id = 's1'", as: "alice"), "it's ✓")
        }

        /// Row-level security decides, as for a request: alice's save in bob's
        /// zone is refused, on the connection as over HTTP.
        func testASaveTheRoleMayNotMake_isRefused_asTheRequestWouldBe() async throws {
            let (alice, messages) = try await subscribed("alice")
            let forged = note("x", in: .private("bob"), "alice's")
            let pushed = try await alice.modify([forged], keeping: nil)
            _ = try await nextSaved(messages, "the answer to the save in bob's zone")
            let requested = try await alice.transport.call(
                .POST, "/modify-checked", json: GatewayWire.ModifyRequest(changes: [GatewayWire.Change(forged)], mark: nil),
                as: GatewayWire.ModifyAnswer.self, doing: "save records")
            guard case .refused(_, let reason)? = pushed.value?.first else {
                return XCTFail("alice saved into bob's zone: \(String(describing: pushed.value))")
            }
            XCTAssertEqual(requested.results?.first?.kind, .refused)
            XCTAssertEqual(reason, requested.results?.first?.reason)
            XCTAssertEqual(try server.psql("SELECT count(*) FROM notes WHERE id = 'x'", as: "postgres"), "0")
        }

        /// A connection that ends before the answer leaves the outcome
        /// unknown: the save fails as transient (the bridge saves again),
        /// rather than waiting for the request timeout.
        func testASaveWhoseConnectionEnds_failsAsTransient_atOnce() async throws {
            let (alice, _) = try await subscribed("alice")
            let gateway = gateways[0]
            gateway.process.send(SIGSTOP)
            let written = alice.pushSaves.written.stream(bufferingNewest: 10)
            let lost = note("lost", in: .private("alice"), "unknown")
            let save = Task { try await alice.modify([lost], keeping: nil) }
            _ = try await deadline(10, "the save written on the push connection") { () -> Int? in
                for await id in written { return id }
                return nil
            }
            gateway.kill()
            let started = Date()
            do {
                _ = try await save.value
                XCTFail("a save whose gateway died was answered")
            } catch let error as CloudSyncError {
                XCTAssertEqual(error.code, .transient, error.message)
                XCTAssertTrue(error.message.contains("ended before it answered save records; its outcome is unknown"), error.message)
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 20, "the save waited for its request timeout")
        }

        /// A save larger than a push frame goes as a request.
        func testASaveLargerThanAFrame_goesAsARequest() async throws {
            let (alice, messages) = try await subscribed("alice")
            let large = String(repeating: "y", count: GatewayWire.maxPushBytes + 1)
            let checked = try await alice.modify([note("large", in: .private("alice"), large)], keeping: nil)
            guard case .saved? = checked.value?.first else { return XCTFail("not saved: \(String(describing: checked.value))") }
            // A small save after it: its answer is the first `saved` frame.
            _ = try await alice.modify([note("small", in: .private("alice"), "after")], keeping: nil)
            let saved = try await nextSaved(messages, "the small save's answer")
            XCTAssertEqual(saved.saved?.results?.first?.id.name, "small", "the large save went on the push connection")
            XCTAssertEqual(try server.psql("SELECT length(title) FROM notes WHERE id = 'large'", as: "alice"), String(large.count))
        }
    }
#endif  // Gateway && Postgres
