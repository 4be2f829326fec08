import Foundation
import GRDB
import GroupStore
import XCTest

@testable import GroupStoreCloud

/// Subscriptions (``CloudSubscription``): a host syncs only the rows its
/// filter holds, as the remote evaluates it; rows move in and out as they
/// change wherever they changed; a changed filter moves only the
/// difference; a host's write outside its subset is uploaded, then removed
/// here. On the in-memory remote here, on the embedded one in
/// ``EmbeddedSubscriptionTests``, on PostgreSQL in ``PostgresSubscriptionTests``.
class SubscriptionTests: CloudTestCase {
    static let schema = "CREATE TABLE job(id TEXT PRIMARY KEY, site INTEGER, body TEXT)"

    /// One sync of group `name` subscribed to `filter` on `job` (`nil`: every row).
    @discardableResult
    func sync(
        _ name: String, where filter: String?, parameters: [String: CloudValue] = [:], file: StaticString = #filePath, line: UInt = #line
    ) async throws -> (summary: CloudSyncSummary, events: [CloudSyncEvent]) {
        var configuration = try configuration(name, tables: ["job"])
        if let filter { configuration.subscriptions = ["job": try CloudFilter(filter)] }
        configuration.subscriptionParameters = parameters
        let sync = CloudSync(configuration)
        let events = sync.events()
        let summary = try await sync.syncOnce(complete: false)
        XCTAssertNil(summary.error, "sync of \(name) failed: \(summary.error ?? "")", file: file, line: line)
        var seen: [CloudSyncEvent] = []
        for await event in events {
            seen.append(event)
            if case .finished = event { break }
        }
        return (summary, seen)
    }

    func ids(_ store: GroupStore) async throws -> [String] {
        try await store.pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM job ORDER BY id") }
    }

    /// The keys of `job` rows deleted by saves whose author is `author`.
    func deleted(by author: String, in store: GroupStore) async throws -> Set<String> {
        let saves = try await store.pool.read { db in try store.historyIntake(db, after: 0, limit: 10_000).saves }
        var keys = Set<String>()
        for save in saves where save.author == author {
            for change in save.changes where change.entity == "job" {
                for key in change.deleted { if case .text(let text) = key { keys.insert(text) } }
            }
        }
        return keys
    }

    func testRowsMoveInAndOut_asTheyChangeOnAnotherHost() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in
            try db.execute(sql: "INSERT INTO job VALUES ('j1', 7, 'one'), ('j2', 8, 'two'), ('j3', 7, 'three')")
        }
        try await sync("a", where: nil)
        try await sync("b", where: "site = 7")
        var held = try await ids(b)
        XCTAssertEqual(held, ["j1", "j3"], "a first sync lists only the subset")

        // Another host moves j1 out and j2 in.
        try await a.write { db in try db.execute(sql: "UPDATE job SET site = 8 WHERE id = 'j1'; UPDATE job SET site = 7 WHERE id = 'j2'") }
        try await sync("a", where: nil)
        let (_, events) = try await sync("b", where: "site = 7")
        held = try await ids(b)
        XCTAssertEqual(held, ["j2", "j3"], "j1 left the subset, j2 entered it")
        let body = try await b.pool.read { db in try String.fetchOne(db, sql: "SELECT body FROM job WHERE id = 'j2'") }
        XCTAssertEqual(body, "two", "a row moving in arrives whole")
        let removedByCloud = try await deleted(by: "cloud", in: b)
        XCTAssertEqual(removedByCloud, ["j1"], "the row that left is removed by the bridge (author cloud)")
        XCTAssertTrue(
            events.contains { if case .movedOut("job", 1) = $0 { true } else { false } }, "a movedOut event says so: \(events)")

        // Never uploaded as a delete: the other host keeps j1.
        try await sync("a", where: nil)
        let kept = try await ids(a)
        XCTAssertEqual(kept, ["j1", "j2", "j3"])
    }

    /// A filter may read the key column too, as on the host's own table
    /// (a remote that keeps keys in record names reads them from there).
    func testAFilterOnTheKeyColumn_readsTheKey() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in
            try db.execute(sql: "INSERT INTO job VALUES ('j1', 7, 'one'), ('j2', 8, 'two'), ('j3', 7, 'three'), ('txt:x', 7, 'odd')")
        }
        try await sync("a", where: nil)
        try await sync("b", where: "id IN ('j1', 'j2', 'j9') AND site = 7 OR id LIKE 'j3'")
        let held = try await ids(b)
        XCTAssertEqual(held, ["j1", "j3"])
    }

    /// References across subsets (``SyncEngine/pullParents(of:zone:summary:)``):
    /// a held child whose parent is outside the parent table's subscription
    /// brings that parent with it, and waits for nothing; a parent no held
    /// row references stays out.
    func testAChildWhoseParentIsOutsideTheSubset_bringsItsParent_andWaitsForNothing() async throws {
        let schema = """
            CREATE TABLE site(id TEXT PRIMARY KEY, region INTEGER);
            CREATE TABLE task(id TEXT PRIMARY KEY, site_id TEXT REFERENCES site(id), n INTEGER)
            """
        let a = try open("a", schema: schema)
        let b = try open("b", schema: schema)
        try await a.write { db in
            try db.execute(
                sql: """
                    INSERT INTO site VALUES ('s1', 1), ('s2', 2), ('s3', 3);
                    INSERT INTO task VALUES ('t1', 's1', 7), ('t2', 's2', 7), ('t3', 's3', 8)
                    """)
        }
        _ = try await sync("a", tables: ["site", "task"])
        var configuration = try configuration("b", tables: ["site", "task"])
        configuration.subscriptions = ["site": try CloudFilter("region = 1"), "task": try CloudFilter("n = 7")]
        let summary = try await CloudSync(configuration).syncOnce(complete: false)
        XCTAssertNil(summary.error)
        let held = try await b.pool.read { db in
            (
                try String.fetchAll(db, sql: "SELECT id FROM site ORDER BY id"),
                try String.fetchAll(db, sql: "SELECT id FROM task ORDER BY id"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM groupstore_cloud_parked") ?? -1
            )
        }
        XCTAssertEqual(held.0, ["s1", "s2"], "s2 came as t2's parent; s3, which no held row references, did not")
        XCTAssertEqual(held.1, ["t1", "t2"])
        XCTAssertEqual(held.2, 0, "nothing waits")
    }

    /// The same rule down a chain and through a link table: a parent
    /// brought in brings its own parent (a grandparent outside its
    /// subscription), and a link row's key brings the parent it names.
    func testAGrandparentAndALinksParent_outsideTheSubset_comeToo() async throws {
        let schema = """
            CREATE TABLE region(id TEXT PRIMARY KEY, n INTEGER);
            CREATE TABLE site(id TEXT PRIMARY KEY, region_id TEXT REFERENCES region(id), n INTEGER);
            CREATE TABLE task(id TEXT PRIMARY KEY, site_id TEXT REFERENCES site(id), n INTEGER);
            CREATE TABLE tag(id TEXT PRIMARY KEY, n INTEGER);
            CREATE TABLE task_tag(task_id TEXT NOT NULL REFERENCES task(id), tag_id TEXT NOT NULL REFERENCES tag(id),
                PRIMARY KEY (task_id, tag_id))
            """
        let tables = ["region", "site", "task", "tag", "task_tag"]
        let a = try open("a", schema: schema)
        let b = try open("b", schema: schema)
        try await a.write { db in
            try db.execute(
                sql: """
                    INSERT INTO region VALUES ('r1', 1), ('r2', 2), ('r3', 3);
                    INSERT INTO site VALUES ('s1', 'r1', 1), ('s2', 'r2', 2), ('s3', 'r3', 3);
                    INSERT INTO task VALUES ('t1', 's1', 7), ('t2', 's2', 7), ('t3', 's3', 8);
                    INSERT INTO tag VALUES ('g1', 1), ('g2', 2), ('g3', 3);
                    INSERT INTO task_tag VALUES ('t1', 'g2'), ('t2', 'g1')
                    """)
        }
        _ = try await sync("a", tables: tables)
        var configuration = try configuration("b", tables: tables)
        configuration.subscriptions = [
            "region": try CloudFilter("n = 1"), "site": try CloudFilter("n = 1"), "task": try CloudFilter("n = 7"),
            "tag": try CloudFilter("n = 1"),
        ]
        let summary = try await CloudSync(configuration).syncOnce(complete: false)
        XCTAssertNil(summary.error)
        let held = try await b.pool.read { db in
            try ["region", "site", "task", "tag"].map { try String.fetchAll(db, sql: "SELECT id FROM \($0) ORDER BY id") }
                + [
                    try String.fetchAll(db, sql: "SELECT task_id || '-' || tag_id FROM task_tag ORDER BY 1"),
                    [String(try Int.fetchOne(db, sql: "SELECT count(*) FROM groupstore_cloud_parked") ?? -1)],
                ]
        }
        XCTAssertEqual(held[0], ["r1", "r2"], "r2 came as the parent of s2, itself the parent of t2")
        XCTAssertEqual(held[1], ["s1", "s2"])
        XCTAssertEqual(held[2], ["t1", "t2"])
        XCTAssertEqual(held[3], ["g1", "g2"], "g2 came as the parent the link t1-g2 names in its key")
        XCTAssertEqual(held[4], ["t1-g2", "t2-g1"])
        XCTAssertEqual(held[5], ["0"], "nothing waits")
    }

    func testARemote_sendsOnlyTheChangesInOrLeavingTheSubset() async throws {
        let remote = try defaultRemote()
        let columns = [
            CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: false, isKey: true),
            CloudColumn(name: "site", kind: .integer, declaredType: "INTEGER", notNull: false, isKey: false),
        ]
        try await remote.prepare([CloudRecordType(name: "job", scope: .private, columns: columns)])
        let zone = CloudZone.private("alice")
        func id(_ name: String) -> CloudRecordID { CloudRecordID(zone: zone, type: "job", name: name) }
        func save(_ name: String, site: Int64, base: String?) -> CloudRecordChange {
            .save(id: id(name), baseTag: base, fields: ["site": .integer(site)], editedAt: Date())
        }
        let subscription = CloudSubscription(filters: ["JOB": try CloudFilter("Site = param('site')")], parameters: ["site": .integer(7)])
        func fetch(since token: CloudChangeToken?) async throws -> CloudChangeBatch {
            let answer = try await remote.fetchChanges(in: zone, since: token, limit: 100, keeping: nil, subscription: subscription)
            return try XCTUnwrap(answer.value)
        }
        func tag(_ result: CloudModifyResult) throws -> String {
            guard case .saved(let record) = result else { throw XCTSkip("not saved: \(result)") }
            return record.tag
        }

        let first = try await remote.modify([save("r1", site: 7, base: nil), save("r2", site: 8, base: nil)])
        let listing = try await fetch(since: nil)
        XCTAssertEqual(listing.changed.map(\.id.name), ["r1"], "a listing holds the subset only")
        XCTAssertEqual(listing.movedOut, [])

        let second = try await remote.modify([
            save("r1", site: 8, base: try tag(first[0])), save("r2", site: 9, base: try tag(first[1])), save("r3", site: 7, base: nil),
        ])
        let changes = try await fetch(since: listing.token)
        XCTAssertEqual(changes.changed.map(\.id.name), ["r3"], "r3 entered")
        XCTAssertEqual(changes.movedOut.map(\.name), ["r1"], "r1 left; r2 was never in it, so nothing of it is sent")
        XCTAssertEqual(changes.deleted, [])

        _ = try await remote.modify([
            .delete(id: id("r3"), baseTag: try tag(second[2]), editedAt: Date()),
            .delete(id: id("r2"), baseTag: try tag(second[1]), editedAt: Date()),
        ])
        let deletes = try await fetch(since: changes.token)
        XCTAssertEqual(deletes.deleted.map(\.name), ["r3"], "the delete of a record in the subset; not r2's")
        XCTAssertEqual(deletes.changed.count + deletes.movedOut.count, 0)

        let selected = try await remote.selected([id("r1"), id("r2"), id("r3"), id("r4")], subscription: subscription)
        XCTAssertEqual(selected, [], "r1 is out of the subset, r2 and r3 deleted, r4 never existed")
        let everything = try await remote.selected([id("r1")], subscription: CloudSubscription())
        XCTAssertEqual(everything, [id("r1")])
    }

    func testAChangedSubscription_movesOnlyTheDifference_andKeepsPendingEdits() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await a.write { db in
            for index in 0..<30 {
                try db.execute(sql: "INSERT INTO job VALUES (?, ?, 'x')", arguments: ["j\(index)", index % 3])
            }
        }
        try await sync("a", where: nil)
        let first = try await sync("b", where: "site = param('site')", parameters: ["site": .integer(0)])
        XCTAssertEqual(first.summary.fetched, 10)
        // An edit here not uploaded yet, of a row the new subscription leaves out.
        try await b.write { db in try db.execute(sql: "UPDATE job SET body = 'edited in b' WHERE id = 'j0'") }

        let second = try await sync("b", where: "site = param('site') OR site = 1", parameters: ["site": .integer(1)])
        XCTAssertEqual(second.summary.fetched, 10, "only the rows of site 1 arrive (a new parameter value is a new subscription)")
        let third = try await sync("b", where: "site >= 1", parameters: [:])
        XCTAssertEqual(third.summary.fetched, 10, "only site 2's rows arrive")
        let held = try await b.pool.read { db in try Int64.fetchAll(db, sql: "SELECT DISTINCT site FROM job ORDER BY site") }
        XCTAssertEqual(held, [1, 2], "site 0's rows left: the pending edit of j0 was uploaded, then j0 left too")

        try await sync("a", where: nil)
        let body = try await a.pool.read { db in try String.fetchOne(db, sql: "SELECT body FROM job WHERE id = 'j0'") }
        XCTAssertEqual(body, "edited in b", "the edit made before the subscription changed is not lost")
        let none = try await sync("b", where: "site >= 1")
        XCTAssertEqual(none.summary.fetched, 0, "an unchanged subscription moves nothing")
    }

    func testAWriteOutsideTheSubscription_isUploaded_thenRemovedHere() async throws {
        let a = try open("a", schema: Self.schema)
        let b = try open("b", schema: Self.schema)
        try await sync("b", where: "site = 7")
        try await b.write { db in try db.execute(sql: "INSERT INTO job VALUES ('in', 7, 'x'), ('out', 9, 'y')") }
        let (summary, events) = try await sync("b", where: "site = 7")
        XCTAssertEqual(summary.uploaded, 2)
        let held = try await ids(b)
        XCTAssertEqual(held, ["in"], "the row written outside the subset is removed once the remote has it")
        XCTAssertTrue(events.contains { if case .movedOut("job", 1) = $0 { true } else { false } }, "\(events)")
        try await sync("a", where: nil)
        let other = try await ids(a)
        XCTAssertEqual(other, ["in", "out"], "and it is on the remote, never lost")
        // A later sync neither brings it back nor deletes it.
        try await sync("b", where: "site = 7")
        try await sync("a", where: nil)
        let still = (try await ids(a), try await ids(b))
        XCTAssertEqual(still.0, ["in", "out"])
        XCTAssertEqual(still.1, ["in"])
    }

    func testFiltersThatCannotBeEvaluated_areRefusedWithTheirSentence() async throws {
        _ = try open("b", schema: Self.schema)
        XCTAssertThrowsError(try CloudFilter("random() > 0")) { error in
            XCTAssertTrue("\(error)".contains("random"), "\(error)")
        }
        XCTAssertThrowsError(try CloudFilter("site IN (SELECT site FROM other)")) { error in
            XCTAssertTrue("\(error)".lowercased().contains("select"), "\(error)")
        }
        let cases: [(table: String, filter: String, parameters: [String: CloudValue], says: String)] = [
            ("job", "nope = 1", [:], "the subscription of table job names column nope, which job does not have"),
            ("task", "site = 1", [:], "a subscription names table task, which this group does not sync"),
            ("job", "site = param('site')", [:], "reads param('site'), which has no value"),
        ]
        for (table, filter, parameters, says) in cases {
            var configuration = try configuration("b", tables: ["job"])
            configuration.subscriptions = [table: try CloudFilter(filter)]
            configuration.subscriptionParameters = parameters
            do {
                let summary = try await CloudSync(configuration).syncOnce(complete: false)
                XCTFail("\(filter) was not refused: \(summary)")
            } catch let error as CloudSyncError {
                XCTAssertEqual(error.code, .invalidConfiguration, filter)
                XCTAssertTrue(error.message.contains(says), "\(filter): \(error.message)")
            }
        }
    }

    func testASubscription_neverWidensWhatTheUserMayRead() async throws {
        let schema = Self.schema + "; CREATE TABLE memo(id TEXT PRIMARY KEY, owner TEXT)"
        let a = try open("a", schema: schema)
        let b = try open("b", schema: schema)
        try await a.write { db in
            try db.execute(sql: "INSERT INTO job VALUES ('private', 7, 'alice only'); INSERT INTO memo VALUES ('m1', 'alice')")
        }
        _ = try await sync("a", tables: ["job", "memo"])
        let filters = [("job", "TRUE"), ("job", "site = 7 OR 1 = 1"), ("memo", "owner = 'alice'"), ("memo", "TRUE")]
        for (table, filter) in filters {
            var configuration = try configuration("b", tables: ["job", "memo"], remote: try defaultRemote(user: "bob"))
            configuration.subscriptions = [table: try CloudFilter(filter)]
            let summary = try await CloudSync(configuration).syncOnce(complete: false)
            XCTAssertNil(summary.error)
            let held = try await b.pool.read { db in
                try String.fetchAll(db, sql: "SELECT id FROM job UNION ALL SELECT id FROM memo")
            }
            XCTAssertEqual(held, [], "bob subscribed to \(table): \(filter) gets none of alice's rows")
        }
        let bob = try defaultRemote(user: "bob")
        let everything = CloudSubscription(filters: ["job": try CloudFilter("TRUE")])
        do {
            _ = try await bob.fetchChanges(in: .private("alice"), since: nil, limit: 10, keeping: nil, subscription: everything)
            XCTFail("bob read alice's private zone through a subscription")
        } catch let error as CloudSyncError {
            XCTAssertEqual(error.code, .permissionDenied)
        }
        let selected = try await bob.selected(
            [CloudRecordID(zone: .private("alice"), type: "job", name: "private")], subscription: everything)
        XCTAssertEqual(selected, [], "nor learns that alice's row exists")
    }
}

/// ``SubscriptionTests`` on the embedded remote (its change log keeps what
/// each record held before each change: format 4). Each test is restated:
/// XCTest on Linux does not discover inherited test methods.
final class EmbeddedSubscriptionTests: SubscriptionTests {
    override class var remoteKind: RemoteKind { .embedded }
    override func testRowsMoveInAndOut_asTheyChangeOnAnotherHost() async throws {
        try await super.testRowsMoveInAndOut_asTheyChangeOnAnotherHost()
    }
    override func testARemote_sendsOnlyTheChangesInOrLeavingTheSubset() async throws {
        try await super.testARemote_sendsOnlyTheChangesInOrLeavingTheSubset()
    }
    override func testAFilterOnTheKeyColumn_readsTheKey() async throws {
        try await super.testAFilterOnTheKeyColumn_readsTheKey()
    }
    override func testAChildWhoseParentIsOutsideTheSubset_bringsItsParent_andWaitsForNothing() async throws {
        try await super.testAChildWhoseParentIsOutsideTheSubset_bringsItsParent_andWaitsForNothing()
    }
    override func testAGrandparentAndALinksParent_outsideTheSubset_comeToo() async throws {
        try await super.testAGrandparentAndALinksParent_outsideTheSubset_comeToo()
    }
    override func testAChangedSubscription_movesOnlyTheDifference_andKeepsPendingEdits() async throws {
        try await super.testAChangedSubscription_movesOnlyTheDifference_andKeepsPendingEdits()
    }
    override func testAWriteOutsideTheSubscription_isUploaded_thenRemovedHere() async throws {
        try await super.testAWriteOutsideTheSubscription_isUploaded_thenRemovedHere()
    }
    override func testFiltersThatCannotBeEvaluated_areRefusedWithTheirSentence() async throws {
        try await super.testFiltersThatCannotBeEvaluated_areRefusedWithTheirSentence()
    }
    override func testASubscription_neverWidensWhatTheUserMayRead() async throws {
        try await super.testASubscription_neverWidensWhatTheUserMayRead()
    }
}
