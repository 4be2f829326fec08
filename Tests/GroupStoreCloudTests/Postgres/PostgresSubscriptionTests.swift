#if Postgres
    import Foundation
    import GRDB
    import GroupStore
    import PostgresTestServer
    import XCTest

    @testable import GroupStoreCloud

    /// ``SubscriptionTests`` on PostgreSQL: each filter evaluated by the server
    /// on the typed table, as the user's role, inside its row-level security;
    /// what a record held at a token read from the change log (format 7).
    /// Then what only a server shows: a row moved out by `psql`, and a filter
    /// the server cannot evaluate on its column types.
    final class PostgresSubscriptionTests: SubscriptionTests {
        override class var remoteKind: RemoteKind { .postgres }
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

        /// A row edited with `psql` out of a host's subset leaves the host as
        /// one edited by another host does (removed by `cloud`, the server
        /// keeps it); one edited into it arrives; a row deleted with `psql`
        /// that the host held is deleted there.
        func testRowsMovedWithPsql_moveInAndOutOfTheHost() async throws {
            let a = try open("a", schema: Self.schema)
            let b = try open("b", schema: Self.schema)
            try await a.write { db in
                try db.execute(sql: "INSERT INTO job VALUES ('j1', 7, 'one'), ('j2', 8, 'two'), ('j3', 7, 'three')")
            }
            try await sync("a", where: nil)
            try await sync("b", where: "site = 7")
            var held = try await ids(b)
            XCTAssertEqual(held, ["j1", "j3"])

            try server.psql("UPDATE job SET site = 9 WHERE id = 'j1'; UPDATE job SET site = 7 WHERE id = 'j2'", as: "alice")
            try server.psql("DELETE FROM job WHERE id = 'j3'", as: "alice")
            let (_, events) = try await sync("b", where: "site = 7")
            held = try await ids(b)
            XCTAssertEqual(held, ["j2"], "j1 moved out and j3 deleted with psql; j2 moved in")
            let removedByCloud = try await deleted(by: "cloud", in: b)
            XCTAssertEqual(removedByCloud, ["j1", "j3"])
            XCTAssertTrue(events.contains { if case .movedOut("job", 1) = $0 { true } else { false } }, "\(events)")
            XCTAssertEqual(try server.psql("SELECT id || ':' || site FROM job WHERE id = 'j1'", as: "alice"), "j1:9", "the server keeps j1")
        }

        /// A filter that parses but that the server cannot evaluate on the
        /// table's column types is refused, naming the table, with the
        /// server's reason; nothing is fetched.
        func testAFilterTheServerCannotEvaluate_isRefusedNamingTheTable() async throws {
            let a = try open("a", schema: Self.schema)
            try await a.write { db in try db.execute(sql: "INSERT INTO job VALUES ('j1', 7, 'one')") }
            try await sync("a", where: nil)
            _ = try open("b", schema: Self.schema)
            var configuration = try configuration("b", tables: ["job"])
            configuration.subscriptions = ["job": try CloudFilter("site = 'north'")]
            let summary = try await CloudSync(configuration).syncOnce(complete: false)
            let error = try XCTUnwrap(summary.error, "site = 'north' on a bigint column was evaluated")
            XCTAssertTrue(error.contains("the subscription of table job cannot be evaluated by"), error)
            XCTAssertTrue(error.contains("bigint"), error)
        }
    }
#endif  // Postgres
