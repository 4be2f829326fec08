#if Gateway && Postgres
    import Foundation
    @testable import GroupStoreCloudHTTP
    import GroupStoreGateway
    import Logging
    import MetricsTestKit
    import PostgresTestServer
    import ServiceLifecycle
    import XCTest

    @testable import GroupStoreCloud

    /// A fetch that would find nothing new is answered by the gateway from
    /// memory (``GroupStoreGateway/FetchMemory``), and a change in its zone, by
    /// anyone, is fetched from the database again: through a real gateway
    /// process, the database's statements counted in its log.
    final class GatewayFetchMemoryTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .gateway }

        /// The feed reads the server logged so far (`log_statement = all`).
        func feedReads() throws -> Int {
            let log = try String(contentsOfFile: server.socketDirectory + "/server.log", encoding: .utf8)
            return log.components(separatedBy: "groupstore.feed(").count - 1
        }

        func testRepeatedFetchesFindingNothingNew_costTheDatabaseNothing_untilTheZoneChanges() async throws {
            try server.psql("ALTER SYSTEM SET log_statement = 'all'")
            try server.psql("SELECT pg_reload_conf()")
            let type = CloudRecordType(
                name: "note", scope: .private,
                columns: [
                    CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
                    CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
                ])
            let alice = try gatewayRemote(user: "alice")
            try await alice.prepare([type])
            let zone = CloudZone.private("alice")
            let first = CloudRecordID(zone: zone, type: "note", name: "n1")
            _ = try await alice.modify([.save(id: first, baseTag: nil, fields: ["title": .text("one")], editedAt: Date())])
            var token: CloudChangeToken?
            var page = try await alice.fetchChanges(in: zone, since: nil, limit: 100)
            while page.moreComing {
                token = page.token
                page = try await alice.fetchChanges(in: zone, since: token, limit: 100)
            }
            token = page.token
            XCTAssertEqual(page.changed.map(\.id.name), ["n1"])

            let before = try feedReads()
            for _ in 0..<20 {
                let empty = try await alice.fetchChanges(in: zone, since: token, limit: 100)
                XCTAssertTrue(empty.changed.isEmpty && empty.deleted.isEmpty, "nothing new: \(empty.changed)")
                XCTAssertEqual(empty.token, token)
            }
            XCTAssertLessThanOrEqual(try feedReads() - before, 1, "the database read the feed once, the gateway answered the rest")

            // Alice's own write through the gateway: her next fetch reads it, without waiting for its notice.
            let own = CloudRecordID(zone: zone, type: "note", name: "n0")
            _ = try await alice.modify([.save(id: own, baseTag: nil, fields: ["title": .text("mine")], editedAt: Date())])
            let afterOwn = try await alice.fetchChanges(in: zone, since: token, limit: 100)
            XCTAssertEqual(afterOwn.changed.map(\.id.name), ["n0"], "a fetch right after a write through the same gateway")
            token = afterOwn.token

            // Another writer (psql, as alice) changes the zone: the next fetches see it.
            try server.psql("INSERT INTO note (id, title) VALUES ('n2', 'by psql')", as: "alice")
            let since = token
            let arrived = try await deadline(30, "the row written with psql, fetched through the gateway") { () -> [String]? in
                while true {
                    let next = try await alice.fetchChanges(in: zone, since: since, limit: 100)
                    if !next.changed.isEmpty { return next.changed.map(\.id.name) }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            XCTAssertEqual(arrived, ["n2"])

            // Another user's identical request is not answered with alice's memory.
            let bob = try gatewayRemote(user: "bob")
            do {
                _ = try await bob.fetchChanges(in: zone, since: token, limit: 100)
                XCTFail("bob read alice's private zone")
            } catch let error as CloudSyncError where error.code == .permissionDenied {}
        }

        static let bulletin = CloudRecordType(
            name: "bulletin", scope: .public,
            columns: [
                CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
                CloudColumn(name: "site", kind: .integer, declaredType: "INTEGER", notNull: false, isKey: false),
            ])

        func deviceRemote(_ device: String, claims: [String: CloudValue] = [:], restrictions: [String: CloudFilter] = [:]) throws
            -> GatewayRemote
        {
            try gatewayRemote(
                token: try GatewayToken.mint(
                    secretFile: gatewaySecret.path, role: TokenVerifier.deviceRole, expiresIn: 3600, claims: claims,
                    restrictions: restrictions, device: device))
        }

        /// Fetches `zone` from `since` to its end: the names changed and the last token.
        static func fetchAll(_ remote: GatewayRemote, _ zone: CloudZone, since: CloudChangeToken?) async throws -> (
            [String], CloudChangeToken?
        ) {
            var (names, token) = ([String](), since)
            while true {
                let page = try await remote.fetchChanges(in: zone, since: token, limit: 100)
                names += page.changed.map(\.id.name)
                token = page.token
                if !page.moreComing { return (names.sorted(), token) }
            }
        }

        /// A commit in a zone every device reads is read from the database
        /// once, however many devices fetch it (at once or after), and every
        /// one of them gets it; a device whose token restricts its reads, or
        /// that may not read the zone, gets what the database would give it.
        func testACommitFetchedByTwelveDevices_isReadOnce_andOnlyWhereTheDatabaseWouldAnswer() async throws {
            try server.psql("GRANT groupstore_device TO authenticator")
            try server.psql("ALTER SYSTEM SET log_statement = 'all'")
            try server.psql("SELECT pg_reload_conf()")
            let alice = try gatewayRemote(user: "alice")
            try await declareAsOwner([Self.bulletin])
            func post(_ name: String, site: Int64) async throws {
                let id = CloudRecordID(zone: .public, type: "bulletin", name: name)
                let results = try await alice.modify([.save(id: id, baseTag: nil, fields: ["site": .integer(site)], editedAt: Date())])
                guard case .saved = results.first else { return XCTFail("alice's save of \(name): \(results)") }
            }
            try await post("b1", site: 7)
            let devices = try (0..<12).map { try deviceRemote("pump-\($0)") }
            let messages = devices.map { $0.pushMessages.stream(bufferingNewest: 100) }
            var tokens: [CloudChangeToken?] = []
            for device in devices { tokens.append(try await Self.fetchAll(device, .public, since: nil).1) }
            XCTAssertEqual(Set(tokens.map { $0?.rawValue }).count, 1, "every device at the zone's head")
            for (index, stream) in messages.enumerated() {
                _ = try await deadline(30, "pump-\(index)'s subscription") { () -> Bool? in
                    for await message in stream where message.type == .subscribed && message.zones == ["public"] { return true }
                    return nil
                }
            }

            // Each device is hinted (with the page it will fetch, or without), then they fetch at once.
            // The row comes from psql: a write through the gateway also marks its zone changed when it
            // answers, which may come after the reads its notice started (a second read is then right).
            let before = try feedReads()
            try server.psql("INSERT INTO bulletin (id, site) VALUES ('b2', 8)", as: "alice")
            for (index, stream) in messages.enumerated() {
                _ = try await deadline(30, "pump-\(index)'s hint of b2") { () -> Bool? in
                    for await message in stream where message.type == .hint { return true }
                    return nil
                }
            }
            let fetched = try await withThrowingTaskGroup(of: [String].self) { group in
                for (device, token) in zip(devices, tokens) { group.addTask { try await Self.fetchAll(device, .public, since: token).0 } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(fetched, Array(repeating: ["b2"], count: devices.count), "every device has the commit")
            XCTAssertEqual(try feedReads() - before, 1, "twelve devices fetching one commit: the database read it once")

            // A token restricted to site 7 gets site 7's rows, whatever the others were answered.
            let restriction = ["bulletin": try CloudFilter("site = claim('site')")]
            let seven = try deviceRemote("pump-s7", claims: ["site": .integer(7)], restrictions: restriction)
            let eight = try deviceRemote("pump-s8", claims: ["site": .integer(8)], restrictions: restriction)
            let read1 = try await Self.fetchAll(seven, .public, since: nil).0
            XCTAssertEqual(read1, ["b1"])
            let read2 = try await Self.fetchAll(eight, .public, since: nil).0
            XCTAssertEqual(read2, ["b2"])
            let read3 = try await Self.fetchAll(devices[1], .public, since: nil).0
            XCTAssertEqual(read3, ["b1", "b2"])

            // A device's private zone: the same request by another device is refused by the database.
            let read4 = try await Self.fetchAll(devices[0], .private("device+pump-0"), since: nil).0
            XCTAssertEqual(read4, [])
            do {
                _ = try await Self.fetchAll(devices[1], .private("device+pump-0"), since: nil)
                XCTFail("pump-1 read pump-0's private zone")
            } catch let error as CloudSyncError where error.code == .permissionDenied {}
        }

        /// The gateway's listener connection going silent (its server
        /// backend stopped: no reset, no answer, as a host gone without one)
        /// is found out by its probe and made again, and meanwhile the memory
        /// stops answering: a change committed while no notice could come is
        /// fetched, not answered "nothing new" from memory for minutes.
        func testASilentListener_isMadeAgain_andTheMemoryDoesNotAnswerMeanwhile() async throws {
            let alice = try gatewayRemote(user: "alice")
            try await alice.prepare([CloudTestCase.titledNotes])
            let zone = CloudZone.private("alice")
            let messages = alice.pushMessages.stream(bufferingNewest: 1000)
            var page = try await alice.fetchChanges(in: zone, since: nil, limit: 100)
            while page.moreComing { page = try await alice.fetchChanges(in: zone, since: page.token, limit: 100) }
            let token = page.token
            // Kept by the memory now.
            let kept = try await alice.fetchChanges(in: zone, since: token, limit: 100)
            XCTAssertTrue(kept.changed.isEmpty)

            let listener = try server.psql(
                "SELECT pid FROM pg_stat_activity WHERE usename = 'authenticator' "
                    + "AND (query LIKE 'LISTEN%' OR query LIKE '%groupstore listener%')", as: "postgres")
            let pid = try XCTUnwrap(pid_t(listener), "the gateway's listener in pg_stat_activity: \(listener)")
            XCTAssertEqual(kill(pid, SIGSTOP), 0)
            defer { kill(pid, SIGCONT) }
            try server.psql("INSERT INTO notes (id, title) VALUES ('late', 'while nobody listened')", as: "alice")

            // Within the probe's interval and timeout, the memory stops answering (polled: another
            // process's state, which sends no event), and the listener made again is a hint to all.
            let started = ContinuousClock.now
            var fetched: [String] = []
            while fetched.isEmpty, ContinuousClock.now - started < .seconds(40) {
                fetched = try await alice.fetchChanges(in: zone, since: token, limit: 100).changed.map(\.id.name)
                if fetched.isEmpty { try await Task.sleep(for: .milliseconds(250)) }
            }
            XCTAssertEqual(fetched, ["late"], "the gateway answered from memory 40 s after its listener went silent")
            let hinted = try await deadline(40, "a hint from the listener made again") { () -> Bool? in
                for await message in messages where message.type == .hint { return true }
                return nil
            }
            XCTAssertTrue(hinted)
        }

        /// A device that read a shared zone and was then removed from it is
        /// answered by the database again (a change of shares ends what the
        /// gateway knew of who may read), while the owner is still answered.
        func testADeviceRemovedFromAShare_isNoLongerAnsweredFromMemory() async throws {
            try server.psql("GRANT groupstore_device TO authenticator")
            let type = CloudRecordType(
                name: "crew_note", scope: .shared,
                columns: [
                    CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
                    CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
                ])
            let (owner, member) = (try deviceRemote("pump-0"), try deviceRemote("pump-1"))
            try await declareAsOwner([type])
            let zone = CloudZone.shared(owner: "device+pump-0", name: "crew")
            let id = CloudRecordID(zone: zone, type: type.name, name: "c1")
            let saved = try await owner.modify([.save(id: id, baseTag: nil, fields: ["title": .text("shift")], editedAt: Date())])
            guard case .saved = saved.first else { return XCTFail("the owner's save: \(saved)") }
            try await owner.share("crew", with: "device+pump-1", access: .readOnly)
            let read5 = try await Self.fetchAll(member, zone, since: nil).0
            XCTAssertEqual(read5, ["c1"])
            let read6 = try await Self.fetchAll(owner, zone, since: nil).0
            XCTAssertEqual(read6, ["c1"])
            try await owner.share("crew", with: "device+pump-1", access: nil)
            let refused = try await deadline(10, "pump-1's fetch of the zone it left is refused (not answered from memory)") {
                () -> Bool? in
                while true {
                    // The owner asks first, so that a fetch the member is allowed to share is kept.
                    guard try await Self.fetchAll(owner, zone, since: nil).0 == ["c1"] else { return false }
                    do {
                        _ = try await Self.fetchAll(member, zone, since: nil)
                    } catch let error as CloudSyncError where error.code == .permissionDenied {
                        return true
                    }
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            XCTAssertEqual(refused, true)
            let read7 = try await Self.fetchAll(owner, zone, since: nil).0
            XCTAssertEqual(read7, ["c1"])
        }

        /// The gateway's metrics say how fetches were answered, and how long
        /// after its commit a change reached a device: an in-process gateway
        /// (so that this process's metrics factory sees it) on the real server.
        func testTheGatewaysMetrics_countFetchesFromMemory_andTheCommitToDeviceLag() async throws {
            let metrics = EventsTests.metrics
            try server.psql("GRANT groupstore_device TO authenticator")
            try await declareAsOwner([Self.bulletin])
            let (ports, port) = AsyncStream.makeStream(of: Int.self)
            let gateway = GatewayServer(
                configuration: GatewayConfiguration(host: "127.0.0.1", port: 0, keys: try GatewayKeys(secretFiles: [gatewaySecret.path])),
                backend: try PostgresGatewayBackend(url: server.url(user: "authenticator"))
            ) { _, listening in port.yield(listening) }
            let group = ServiceGroup(services: [gateway], logger: Logger(label: "in-process-gateway"))
            let running = Task<Void, Never> { _ = try? await group.run() }
            defer { running.cancel() }
            var iterator = ports.makeAsyncIterator()
            let first = await iterator.next()
            let listening = try XCTUnwrap(first, "the in-process gateway listens")
            func remote(_ token: String) throws -> GatewayRemote {
                try GatewayRemote(GatewayRemote.Configuration(url: "http://127.0.0.1:\(listening)", token: token))
            }
            let alice = try remote(try gatewaySecret.token(role: "alice"))
            let devices = try (0..<5).map { index in
                try remote(
                    try GatewayToken.mint(
                        secretFile: gatewaySecret.path, role: TokenVerifier.deviceRole, expiresIn: 3600, device: "meter-\(index)"))
            }
            var tokens: [CloudChangeToken?] = []
            for device in devices { tokens.append(try await Self.fetchAll(device, .public, since: nil).1) }
            let fromMemory = [("answered", "memory")]
            let lagLabel = "groupstore_gateway_commit_to_device_seconds"
            let memoryBefore = (try? metrics.expectCounter("groupstore_gateway_fetches_total", fromMemory).totalValue) ?? 0
            let lagsBefore = (try? metrics.expectTimer(lagLabel).values.count) ?? 0

            let id = CloudRecordID(zone: .public, type: "bulletin", name: "b1")
            let saved = try await alice.modify([.save(id: id, baseTag: nil, fields: ["site": .integer(1)], editedAt: Date())])
            guard case .saved = saved.first else { return XCTFail("alice's save: \(saved)") }
            let since = tokens[0]
            _ = try await deadline(30, "alice's fetch finds her commit") { () -> Bool? in
                while try await Self.fetchAll(alice, .public, since: since).0 != ["b1"] { try await Task.sleep(for: .milliseconds(10)) }
                return true
            }
            for (device, token) in zip(devices, tokens) {
                let names = try await Self.fetchAll(device, .public, since: token).0
                XCTAssertEqual(names, ["b1"])
            }
            let memoryAfter = try metrics.expectCounter("groupstore_gateway_fetches_total", fromMemory).totalValue
            XCTAssertGreaterThanOrEqual(memoryAfter - memoryBefore, 4, "of five devices fetching one commit, one read it at most")
            let lags = try metrics.expectTimer(lagLabel).values.dropFirst(lagsBefore)
            XCTAssertGreaterThanOrEqual(lags.count, 5, "a lag for each answer that carried the change")
            for lag in lags { XCTAssertTrue((0..<30_000_000_000).contains(lag), "a lag of \(lag) ns") }
            await group.triggerGracefulShutdown()
            await running.value
        }
    }
#endif  // Gateway && Postgres
