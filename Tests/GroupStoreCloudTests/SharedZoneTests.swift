import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import XCTest

/// Shared zones through the bridge: alice owns `family`, shares it with bob
/// read-write and with carol read-only; each syncs the table `item` into it
/// from their own group.
class SharedZoneTests: CloudTestCase {
    static let schema = "CREATE TABLE item(id TEXT PRIMARY KEY, title TEXT)"
    let family = CloudZone.shared(owner: "alice", name: "family")

    func sharedConfiguration(_ user: String) throws -> CloudSyncConfiguration {
        var configuration = try configuration(user, tables: [], remote: try defaultRemote(user: user))
        configuration.sharedTables = ["item"]
        configuration.sharedZone = family
        return configuration
    }

    @discardableResult
    func syncShared(_ user: String, file: StaticString = #filePath, line: UInt = #line) async throws -> CloudSyncSummary {
        try await declareAsOwner(user, publicTables: [], sharedTables: ["item"])
        let summary = try await CloudSync(try sharedConfiguration(user)).syncOnce()
        XCTAssertNil(summary.error, "sync of \(user) failed: \(summary.error ?? "")", file: file, line: line)
        return summary
    }

    func testReadWriteAndReadOnlyMembers_andUnsharingRemovesTheRowsFromTheGroup() async throws {
        let alice = try open("alice", schema: Self.schema)
        let bob = try open("bob", schema: Self.schema)
        let carol = try open("carol", schema: Self.schema)
        try await alice.write { db in try db.execute(sql: "INSERT INTO item VALUES ('a1', 'from alice')") }
        try await syncShared("alice")
        // Before it is shared, bob's sync fetches nothing and fails nothing.
        try await bob.write { db in try db.execute(sql: "INSERT INTO item VALUES ('b0', 'too early')") }
        let early = try await syncShared("bob")
        XCTAssertEqual(early.parked, 1, "bob's row cannot go up to a zone not shared with him")
        XCTAssertEqual(try dump(bob, "item"), ["t:b0|t:too early"])

        let owner = try defaultRemote(user: "alice")
        try await owner.share("family", with: "bob", access: .readWrite)
        try await owner.share("family", with: "carol", access: .readOnly)
        try await syncShared("bob")
        try await syncShared("carol")
        XCTAssertEqual(try dump(bob, "item"), ["t:a1|t:from alice", "t:b0|t:too early"])
        XCTAssertEqual(try dump(carol, "item"), ["t:a1|t:from alice"])

        // bob edits alice's row and adds one: both reach alice and carol.
        try await bob.write { db in
            try db.execute(
                sql: "UPDATE item SET title = 'alice, edited by bob' WHERE id = 'a1'; INSERT INTO item VALUES ('b1', 'from bob')")
        }
        let bobs = try await syncShared("bob")
        XCTAssertEqual(bobs.uploaded, 2)
        // carol's edits are refused by the remote: parked and reported, her group keeps them, nobody else sees them.
        try await syncShared("carol")
        try await carol.write { db in
            try db.execute(sql: "UPDATE item SET title = 'carol was here' WHERE id = 'b1'; INSERT INTO item VALUES ('c1', 'from carol')")
        }
        let carols = try await syncShared("carol")
        XCTAssertEqual(carols.parked, 2)
        try await syncShared("alice")
        XCTAssertEqual(try dump(alice, "item"), ["t:a1|t:alice, edited by bob", "t:b1|t:from bob"])
        XCTAssertEqual(try dump(carol, "item"), ["t:a1|t:alice, edited by bob", "t:b1|t:carol was here", "t:c1|t:from carol"])

        // bob's group runs; alice stops sharing with him: the zone's rows leave his group
        // (a save of `cloud` every member sees), with no sync asked for.
        let bobSaves = bob.saves()
        try await bob.start()
        let running = CloudSync(try sharedConfiguration("bob"))
        let run = Task { try await running.run() }
        defer { run.cancel() }
        let events = running.events()
        _ = try await deadline(30, "bob's running bridge to finish a sync") {
            for await event in events { if case .finished = event { return true } }
            return nil
        }
        let afterRevocation = running.events()
        try await owner.share("family", with: "bob", access: nil)
        let removal = try await deadline(30, "the rows of the unshared zone to leave bob's group") {
            for await save in bobSaves where save.author == "cloud" && !(save.change(of: "item")?.deleted ?? []).isEmpty { return save }
            return nil
        }
        XCTAssertEqual(Set(removal.change(of: "item")?.deleted ?? []), ["a1", "b1"])
        let left = try await deadline(30, "the bridge's zoneLeft event") {
            for await event in afterRevocation { if case .zoneLeft(let zone, let records, _) = event { return (zone, records) } }
            return nil
        }
        XCTAssertEqual(left.0, family)
        XCTAssertEqual(left.1, 2)
        XCTAssertEqual(try dump(bob, "item"), ["t:b0|t:too early"], "his own row never in the zone stays")
        // The owner keeps everything; carol still reads it.
        try await syncShared("alice")
        XCTAssertEqual(try dump(alice, "item"), ["t:a1|t:alice, edited by bob", "t:b1|t:from bob"])
    }

    func testAnEditNotUploadedWhenTheZoneIsUnshared_staysAndIsParked() async throws {
        let alice = try open("alice", schema: Self.schema)
        let bob = try open("bob", schema: Self.schema)
        try await alice.write { db in try db.execute(sql: "INSERT INTO item VALUES ('a1', 'one'), ('a2', 'two')") }
        try await syncShared("alice")
        let owner = try defaultRemote(user: "alice")
        try await owner.share("family", with: "bob", access: .readWrite)
        try await syncShared("bob")
        // bob edits a1, then loses the zone before his next sync.
        try await bob.write { db in try db.execute(sql: "UPDATE item SET title = 'bob''s edit' WHERE id = 'a1'") }
        try await owner.share("family", with: "bob", access: nil)
        let summary = try await syncShared("bob")
        XCTAssertEqual(try dump(bob, "item"), ["t:a1|t:bob's edit"], "a2 left with the zone; bob's edit stayed")
        XCTAssertEqual(summary.parked, 1, "the edit cannot go up: parked and reported")
        try await syncShared("alice")
        XCTAssertEqual(try dump(alice, "item"), ["t:a1|t:one", "t:a2|t:two"])
    }

    func testChangingTheSharedZone_leavesTheOldZoneAndFetchesTheNewOne() async throws {
        let alice = try open("alice", schema: Self.schema)
        try await alice.write { db in try db.execute(sql: "INSERT INTO item VALUES ('f1', 'family')") }
        try await syncShared("alice")
        var work = try sharedConfiguration("alice")
        work.sharedZone = .shared(owner: "alice", name: "work")
        let switched = try await CloudSync(work).syncOnce()
        XCTAssertNil(switched.error)
        XCTAssertEqual(try dump(alice, "item"), [], "the family zone's row left with it")
        try await alice.write { db in try db.execute(sql: "INSERT INTO item VALUES ('w1', 'work')") }
        _ = try await CloudSync(work).syncOnce()
        try await syncShared("alice")
        XCTAssertEqual(try dump(alice, "item"), ["t:f1|t:family"], "back to family: its row is listed again, work's left")
        let family = try await fetchAll(try defaultRemote(user: "alice"), family, since: nil)
        XCTAssertEqual(family.changed.map(\.id.name), ["f1"])
    }

    func testZoneDescriptions_parseOrAreRefused() {
        XCTAssertEqual(CloudZone(description: "shared/alice/family"), .shared(owner: "alice", name: "family"))
        XCTAssertEqual(CloudZone(description: "shared/a/b/c"), .shared(owner: "a/b", name: "c"))
        for text in [
            "shared/family", "shared/", "shared//family", "shared/alice/", "shared/ alice/family", "shared/alice/no good",
            "shared/alice/" + String(repeating: "x", count: 64), "private/", "publics",
        ] {
            XCTAssertNil(CloudZone(description: text), text)
        }
    }

    func testASharedTableReferencingAPrivateOne_isRefused_andSharedTablesNeedAZone() async throws {
        _ = try open(
            "alice",
            schema: "CREATE TABLE folder(id TEXT PRIMARY KEY); CREATE TABLE item(id TEXT PRIMARY KEY, folder TEXT REFERENCES folder(id))")
        var configuration = try sharedConfiguration("alice")
        configuration.privateTables = ["folder"]
        let refusing = configuration
        let refused = await cloudError { _ = try await CloudSync(refusing).syncOnce() }
        XCTAssertEqual(refused?.code, .tableRefused)
        XCTAssertTrue(refused?.message.contains("shared table item references private table folder") ?? false, refused?.message ?? "")
        configuration.privateTables = []
        configuration.sharedTables = ["item", "folder"]
        configuration.sharedZone = nil
        let zoneless = configuration
        let noZone = await cloudError { _ = try await CloudSync(zoneless).syncOnce() }
        XCTAssertEqual(noZone?.code, .invalidConfiguration)
        XCTAssertTrue(noZone?.message.contains("need a shared zone") ?? false, noZone?.message ?? "")
    }
}
