#if Postgres
    import Foundation
    import GRDB
    import GroupStore
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import PostgresTestServer
    import Subprocesses
    import XCTest

    /// Users are database roles; row-level security on the server decides what
    /// each reads and writes — through the library and with `psql` alike.
    final class PostgresScopeTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .postgres }
        static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT); CREATE TABLE board(id TEXT PRIMARY KEY, title TEXT)"

        func testPrivateRows_areInvisibleAndUnchangeableByAnotherRole_throughTheLibraryAndPsql() async throws {
            let alice = try open("alice", schema: Self.schema)
            let bob = try open("bob", schema: Self.schema)
            try await alice.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'secret of alice')") }
            try await sync("alice", tables: ["note"], remote: try pgRemote(user: "alice"))
            try await bob.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'same key, bob''s own')") }
            try await sync("bob", tables: ["note"], remote: try pgRemote(user: "bob"))
            // Same key, two private zones: neither sees nor touches the other's row.
            XCTAssertEqual(try dump(bob, "note"), ["t:n1|t:same key, bob's own"])
            try await sync("alice", tables: ["note"], remote: try pgRemote(user: "alice"))
            XCTAssertEqual(try dump(alice, "note"), ["t:n1|t:secret of alice"])

            // Through the library: bob may neither read alice's zone nor write to it.
            let asBob = try pgRemote(user: "bob")
            _ = try await asBob.account()
            do {
                _ = try await asBob.fetchChanges(in: .private("alice"), since: nil, limit: 10)
                XCTFail("bob read alice's private zone")
            } catch CloudSyncError.permissionDenied {}
            let id = CloudRecordID(zone: .private("alice"), type: "note", name: "n1")
            let results = try await asBob.modify([.save(id: id, baseTag: nil, fields: ["title": .text("bob was here")], editedAt: Date())])
            guard case .refused = results.first else { return XCTFail("bob wrote to alice's zone: \(results)") }

            // With psql as bob: his row only; updates, deletes and the log reveal nothing of alice's.
            XCTAssertEqual(try server.psql("SELECT gs_owner || ':' || title FROM note ORDER BY 1", as: "bob"), "bob:same key, bob's own")
            XCTAssertEqual(try server.psql("UPDATE note SET title = 'x' WHERE gs_owner = 'alice' RETURNING id", as: "bob"), "")
            XCTAssertEqual(try server.psql("DELETE FROM note WHERE gs_owner = 'alice' RETURNING id", as: "bob"), "")
            XCTAssertEqual(try server.psql("SELECT count(*) FROM groupstore.change_log WHERE zone <> 'private/bob'", as: "bob"), "0")
            // A row bob inserts claiming alice as owner is his all the same.
            try server.psql("INSERT INTO note (id, title, gs_owner, gs_zone) VALUES ('n2', 'claimed', 'alice', 'private/alice')", as: "bob")
            XCTAssertEqual(try server.psql("SELECT gs_owner || ' ' || gs_zone FROM note WHERE id = 'n2'", as: "bob"), "bob private/bob")
            XCTAssertEqual(try server.psql("SELECT title FROM note WHERE gs_owner = 'alice'", as: "postgres"), "secret of alice")
            // A role may not escape the table's security: it owns nothing, and may not change it.
            XCTAssertThrowsError(try server.psql("ALTER TABLE note DISABLE ROW LEVEL SECURITY", as: "bob"))
            XCTAssertThrowsError(
                try server.psql("INSERT INTO groupstore.change_log (zone, type, name) VALUES ('private/alice', 'note', 'n9')", as: "bob"))
        }

        func testPublicRows_areReadByEveryRole_andWrittenByTheirCreatorOnly() async throws {
            let alice = try open("alice", schema: Self.schema)
            let bob = try open("bob", schema: Self.schema)
            try await alice.write { db in try db.execute(sql: "INSERT INTO board VALUES ('b1', 'posted by alice')") }
            try await sync("alice", tables: [], publicTables: ["board"], remote: try pgRemote(user: "alice"))
            try await sync("bob", tables: [], publicTables: ["board"], remote: try pgRemote(user: "bob"))
            XCTAssertEqual(try dump(bob, "board"), ["t:b1|t:posted by alice"])

            // bob edits it in his group: the server refuses, alice's row stays; bob's own post goes up.
            try await bob.write { db in
                try db.execute(sql: "UPDATE board SET title = 'defaced' WHERE id = 'b1'; INSERT INTO board VALUES ('b2', 'posted by bob')")
            }
            let summary = try await CloudSync(
                try configuration("bob", tables: [], publicTables: ["board"], remote: try pgRemote(user: "bob"))
            )
            .syncOnce()
            XCTAssertEqual(summary.parked, 1, "bob's edit of alice's row is refused and parked")
            XCTAssertEqual(
                try server.psql("SELECT id || ':' || title FROM board ORDER BY id", as: "alice"), "b1:posted by alice\nb2:posted by bob")
            XCTAssertEqual(try server.psql("UPDATE board SET title = 'x' WHERE id = 'b1' RETURNING id", as: "bob"), "")
            XCTAssertEqual(try server.psql("UPDATE board SET title = 'edited by bob' WHERE id = 'b2' RETURNING id", as: "bob"), "b2")
            try await sync("alice", tables: [], publicTables: ["board"], remote: try pgRemote(user: "alice"))
            XCTAssertEqual(try dump(alice, "board"), ["t:b1|t:posted by alice", "t:b2|t:edited by bob"])
        }

        func testASharedZone_withPsql_readOnlyForOneRole_readWriteForAnother_andUnshared() async throws {
            let alice = try open("alice", schema: "CREATE TABLE item(id TEXT PRIMARY KEY, title TEXT)")
            try await alice.write { db in try db.execute(sql: "INSERT INTO item VALUES ('a1', 'from alice')") }
            try await declareAsOwner("alice", publicTables: [], sharedTables: ["item"])
            var configuration = try configuration("alice", tables: [], remote: try pgRemote(user: "alice"))
            configuration.sharedTables = ["item"]
            configuration.sharedZone = .shared(owner: "alice", name: "family")
            let first = try await CloudSync(configuration).syncOnce()
            XCTAssertNil(first.error)
            // Shares are plain rows too: each owner manages those of her zones, and no other.
            try server.psql(
                "INSERT INTO groupstore.shares (zone, member, can_write) VALUES ('family', 'bob', true), ('family', 'carol', false)",
                as: "alice")
            XCTAssertThrowsError(
                try server.psql(
                    "INSERT INTO groupstore.shares (owner, zone, member, can_write) VALUES ('alice', 'family', 'carol', true)", as: "carol")
            )
            XCTAssertEqual(
                try server.psql("UPDATE groupstore.shares SET can_write = true WHERE member = 'carol' RETURNING member", as: "carol"), "")
            XCTAssertEqual(
                try server.psql("SELECT member || ':' || can_write FROM groupstore.shares ORDER BY 1", as: "carol"), "carol:false")

            // bob (read-write) inserts and updates with psql; a row must name its zone.
            try server.psql("INSERT INTO item (id, title, gs_zone) VALUES ('p1', 'by bob with psql', 'shared/alice/family')", as: "bob")
            XCTAssertEqual(try server.psql("UPDATE item SET title = 'alice, edited by bob' WHERE id = 'a1' RETURNING id", as: "bob"), "a1")
            XCTAssertThrowsError(try server.psql("INSERT INTO item (id, title) VALUES ('p2', 'no zone')", as: "bob")) { error in
                XCTAssertTrue("\(error)".contains("gs_zone"), "\(error)")
            }
            XCTAssertThrowsError(
                try server.psql("INSERT INTO item (id, title, gs_zone) VALUES ('p3', 'x', 'shared/carol/family')", as: "bob"))
            // carol (read-only) reads everything and changes nothing.
            XCTAssertEqual(
                try server.psql("SELECT id || ':' || title FROM item ORDER BY id", as: "carol"),
                "a1:alice, edited by bob\np1:by bob with psql")
            XCTAssertEqual(try server.psql("UPDATE item SET title = 'carol' RETURNING id", as: "carol"), "")
            XCTAssertEqual(try server.psql("DELETE FROM item RETURNING id", as: "carol"), "")
            XCTAssertThrowsError(
                try server.psql("INSERT INTO item (id, title, gs_zone) VALUES ('c1', 'x', 'shared/alice/family')", as: "carol"))
            // What bob did with psql reaches alice's group, author `cloud`.
            let saves = alice.saves()
            try await alice.start()
            let second = try await CloudSync(configuration).syncOnce()
            XCTAssertNil(second.error)
            let save = try await deadline(30, "the save of `cloud` in alice's group") {
                for await save in saves where save.author == "cloud" { return save }
                return nil
            }
            XCTAssertEqual(save.change(of: "item")?.inserted, ["p1"])
            XCTAssertEqual(save.change(of: "item")?.updated, ["a1"])
            XCTAssertEqual(try dump(alice, "item"), ["t:a1|t:alice, edited by bob", "t:p1|t:by bob with psql"])

            // Unshared: bob sees nothing of the zone any more, not even in the log.
            try server.psql("DELETE FROM groupstore.shares WHERE member = 'bob'", as: "alice")
            XCTAssertEqual(try server.psql("SELECT count(*) FROM item", as: "bob"), "0")
            XCTAssertEqual(try server.psql("SELECT count(*) FROM groupstore.change_log WHERE zone LIKE 'shared/%'", as: "bob"), "0")
            XCTAssertEqual(try server.psql("SELECT count(*) FROM groupstore.change_log WHERE zone LIKE 'shared/%'", as: "carol"), "3")
        }

        func testARoleWithoutGroupstoreUser_isToldWhatToGrant_andAScopeChangeIsRefused() async throws {
            try server.createRole("dave")
            let dave = try pgRemote(user: "dave")
            do {
                _ = try await dave.account()
                XCTFail("dave was let in")
            } catch let error as CloudSyncError {
                XCTAssertEqual(error.code, .permissionDenied)
                XCTAssertTrue(error.message.contains("GRANT groupstore_user TO \"dave\""), error.message)
            }
            let alice = try open("alice", schema: Self.schema)
            try await alice.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'x')") }
            try await sync("alice", tables: ["note"])
            let summary = try await CloudSync(try configuration("alice", tables: [], publicTables: ["note"])).syncOnce()
            XCTAssertEqual(summary.errorCode, CloudSyncError.scopeChanged.rawValue, summary.error ?? "")
            XCTAssertTrue(summary.error?.contains("note is synced as private") ?? false, summary.error ?? "")
        }

        func testPrivateAssets_areUnreadableByAnotherRole_evenByNamingTheirHash_andARowNamingALostAssetWaitsAlone() async throws {
            let schema =
                "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT, photo BLOB); CREATE TABLE board(id TEXT PRIMARY KEY, title TEXT, x)"
            let alice = try open("alice", schema: schema)
            let diary = [UInt8](repeating: 0x41, count: 70_000)
            try await alice.write { db in try db.execute(sql: "INSERT INTO note VALUES ('n1', 'diary', ?)", arguments: [Data(diary)]) }
            try await sync("alice", tables: ["note"], publicTables: ["board"])
            XCTAssertEqual(try server.psql("SELECT count(*) FROM groupstore.assets", as: "alice"), "1")
            XCTAssertEqual(
                try server.psql("SELECT count(*) FROM groupstore.assets", as: "bob"), "0", "bob reads no private blob of alice's")
            let asBob = try pgRemote(user: "bob")
            _ = try await asBob.account()
            do {
                _ = try await asBob.downloadAsset(CloudAsset(bytes: diary))
                XCTFail("bob downloaded alice's private asset")
            } catch CloudSyncError.badRemote {}

            // Naming a hash is no way to read an asset: a row naming one bob neither uploaded nor may read is refused.
            let hash = CloudAsset(bytes: diary).hash
            for sql in [
                #"INSERT INTO board (id, title, x) VALUES ('steal', 'bob', '{"a":{"h":"\#(hash)","n":70000}}')"#,
                #"INSERT INTO board (id, title, gs_extra) VALUES ('steal', 'bob', '{"photo":{"a":{"h":"\#(hash)","n":70000}}}')"#,
                #"INSERT INTO note (id, title, gs_extra) VALUES ('steal', 'bob', '{"photo":{"a":{"h":"\#(hash)","n":70000}}}')"#,
            ] {
                XCTAssertThrowsError(try server.psql(sql, as: "bob")) { error in
                    XCTAssertTrue("\(error)".contains("neither one this role uploaded nor one it may read"), "\(error)")
                }
            }
            XCTAssertEqual(try server.psql("SELECT count(*) FROM groupstore.assets", as: "bob"), "0")

            // An asset the server lost (deleted by an administrator): the row naming it waits, the others sync.
            let bob = try open("bob", schema: schema)
            try await alice.write { db in
                try db.execute(
                    sql: "INSERT INTO board VALUES ('b1', 'with a blob', ?); INSERT INTO board VALUES ('b2', 'plain', NULL)",
                    arguments: [Data(diary)])
            }
            try await sync("alice", tables: ["note"], publicTables: ["board"])
            try server.psql("DELETE FROM groupstore.assets")
            let summary = try await CloudSync(
                try configuration("bob", tables: [], publicTables: ["board"], remote: try pgRemote(user: "bob"))
            )
            .syncOnce()
            XCTAssertNil(summary.error, summary.error ?? "")
            XCTAssertEqual(summary.parked, 1, "the row naming a missing asset is parked")
            XCTAssertEqual(try dump(bob, "board"), ["t:b2|t:plain|NULL"])
        }

        func testPlainJSONInAnUntypedColumn_andNamesTooLongForPostgreSQL() async throws {
            let schema =
                #"CREATE TABLE doc(id TEXT PRIMARY KEY, x); CREATE TABLE "\#(String(repeating: "é", count: 40))"(id TEXT PRIMARY KEY)"#
            let alice = try open("alice", schema: schema)
            try await sync("alice", tables: ["doc"])
            try server.psql(
                #"INSERT INTO doc (id, x) VALUES ('j1', '[1,2]'), ('j2', '"hello"'), ('j3', '5'), ('j4', 'true'), ('j5', '2.5')"#,
                as: "alice")
            try await sync("alice", tables: ["doc"])
            XCTAssertEqual(try dump(alice, "doc"), ["t:j1|t:[1, 2]", "t:j2|t:hello", "t:j3|i:5", "t:j4|i:1", "t:j5|r:2.5"])
            let long = String(repeating: "é", count: 40)
            let summary = try await CloudSync(try configuration("alice", tables: [long])).syncOnce()
            XCTAssertEqual(summary.errorCode, CloudSyncError.tableRefused.rawValue, summary.error ?? "")
            XCTAssertTrue(summary.error?.contains("63 bytes") ?? false, summary.error ?? "")
        }
    }
#endif  // Postgres
