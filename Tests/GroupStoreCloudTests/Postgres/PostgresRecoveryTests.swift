#if Postgres
    import Foundation
    import GRDB
    import GroupStore
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import PostgresTestServer
    import Subprocesses
    import XCTest

    /// The server restarted, and the listener's backend terminated, while two
    /// groups sync: sync resumes, nothing lost or duplicated.
    final class PostgresRecoveryTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .postgres }
        static let schema = "CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER)"

        func testServerRestartedAndListenerTerminated_midSync_nothingLostOrDuplicated() async throws {
            let a = try open("a", schema: Self.schema)
            let b = try open("b", schema: Self.schema)
            let bSaves = b.saves()
            try await b.start()
            let syncs = [CloudSync(try configuration("a", tables: ["item"])), CloudSync(try configuration("b", tables: ["item"]))]
            let runs = syncs.map { sync in Task { try await sync.run() } }
            defer { for run in runs { run.cancel() } }

            let total = 120
            for index in 0..<total {
                try await a.write { db in try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: ["i\(index)", index]) }
                if index == 30 { try server.restart(mode: "fast") }
                if index == 60 { try server.terminateBackends(of: "alice") }
                if index == 90 { try server.restart(mode: "immediate") }
                try await Task.sleep(for: .milliseconds(5))
            }
            // A last write after the turbulence, then wait for every row in B.
            try await a.write { db in try db.execute(sql: "UPDATE item SET n = -1 WHERE id = 'i0'") }
            let store = b
            _ = try await deadline(60, "all \(total) rows in group B") {
                for await _ in bSaves {
                    let count = try await store.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") ?? 0 }
                    let first = try await store.pool.read { try Int.fetchOne($0, sql: "SELECT n FROM item WHERE id = 'i0'") }
                    if count == total, first == -1 { return true }
                }
                return nil
            }
            XCTAssertEqual(try dump(b, "item"), try dump(a, "item"))
            // Once on the server each: the typed table's key is the record's zone and name.
            XCTAssertEqual(try server.psql("SELECT count(*), count(DISTINCT gs_name) FROM item", as: "alice"), "\(total)|\(total)")
            XCTAssertEqual(try server.psql("SELECT n FROM item WHERE id = 'i0'", as: "alice"), "-1")
        }

        /// The review's R1: a server set up again under a running remote, found
        /// by a fetch's own check of the mark (not by asking the history on
        /// its own), leaves nothing of the old epoch in the remote: the
        /// listing after it carries the new epoch's tags and token.
        func testAServerSetUpAgain_foundByAFetchsCheck_leavesNothingOfTheOldEpochInTheRemote() async throws {
            let note = CloudRecordType(
                name: "note", scope: .private,
                columns: [
                    CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
                    CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
                ])
            let zone = CloudZone.private("alice")
            func save(_ name: String, on remote: PostgresRemote) async throws {
                let id = CloudRecordID(zone: zone, type: "note", name: name)
                let saved = try await remote.modify([.save(id: id, baseTag: nil, fields: ["title": .text(name)], editedAt: Date())])
                guard case .saved = saved.first else { return XCTFail("\(name) was not saved: \(saved)") }
            }
            let remote = try pgRemote()
            try await remote.prepare([note])
            try await save("n1", on: remote)
            let mark = try await remote.history(keeping: nil).head
            let token = try await remote.fetchChanges(in: zone, since: nil, limit: 100).token

            // Set up again from outside this remote, as an administrator would, and written to.
            try server.psql("DROP TABLE public.note; DROP SCHEMA groupstore CASCADE")
            _ = try await PostgresRemote.setup(url: server.url(user: "postgres"))
            let other = try pgRemote()
            try await other.prepare([note])
            try await save("n2", on: other)

            let found = try await remote.fetchChanges(in: zone, since: token, limit: 100, keeping: mark)
            XCTAssertNil(found.value, "no page of a server whose history lacks the mark")
            XCTAssertFalse(found.history.keepsMark)
            let epoch = found.history.head.epoch
            XCTAssertNotEqual(epoch, mark.epoch, "the server set up again has another epoch")

            // What a bridge does next: prepare its tables again and list the zone.
            try await remote.prepare([note])
            let listed = try await remote.fetchChanges(in: zone, since: nil, limit: 100, keeping: found.history.head)
            let page = try XCTUnwrap(listed.value, "the listing keeps the head the check answered")
            XCTAssertEqual(page.changed.map(\.id.name), ["n2"])
            for record in page.changed {
                XCTAssertTrue(record.tag.hasSuffix("-" + epoch.prefix(8)), "\(record.tag) is a tag of the new epoch \(epoch.prefix(8))")
            }
            // Its tag and token work on the new server: an edit lands, and the feed goes on from the token.
            let edited = try await remote.modify([
                .save(id: page.changed[0].id, baseTag: page.changed[0].tag, fields: ["title": .text("edited")], editedAt: Date())
            ])
            guard case .saved = edited.first else { return XCTFail("an edit on the listed tag: \(edited)") }
            let next = try await remote.fetchChanges(in: zone, since: page.token, limit: 100)
            XCTAssertEqual(next.changed.map(\.id.name), ["n2"], "the feed from the listing's token")
        }
    }
#endif  // Postgres
