#if Gateway && Postgres
    import Foundation
    import GroupStoreCloudHTTP
    import PostgresTestServer
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
    }
#endif  // Gateway && Postgres
