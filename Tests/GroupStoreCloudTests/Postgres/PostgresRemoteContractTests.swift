#if Postgres
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import PostgresTestServer
    import Subprocesses
    import XCTest

    /// The remote contract, on a PostgreSQL server (each test restated: XCTest
    /// on Linux does not always discover inherited test methods). Not final:
    /// ``GatewayRemoteContractTests`` runs it through a gateway.
    class PostgresRemoteContractTests: RemoteContractTests {
        override class var remoteKind: RemoteKind { .postgres }
        override func testEverySaveGetsANewTagAndTheSavedRecordIsWhatIsFetched() async throws {
            try await super.testEverySaveGetsANewTagAndTheSavedRecordIsWhatIsFetched()
        }
        override func testStaleTagIsAConflictCarryingTheServerRecord() async throws {
            try await super.testStaleTagIsAConflictCarryingTheServerRecord()
        }
        override func testStaleEditOfADeletedRecordIsAConflictWithNothing() async throws {
            try await super.testStaleEditOfADeletedRecordIsAConflictWithNothing()
        }
        override func testSaveOrDeleteWithoutTagOfALiveRecordConflicts() async throws {
            try await super.testSaveOrDeleteWithoutTagOfALiveRecordConflicts()
        }
        override func testFieldsNotSentAreKept() async throws { try await super.testFieldsNotSentAreKept() }
        override func testEachChangeStandsAloneInOrder() async throws { try await super.testEachChangeStandsAloneInOrder() }
        override func testEditTimeNeverLaterThanTheRemoteClockAndAboveTheVersionEdited() async throws {
            try await super.testEditTimeNeverLaterThanTheRemoteClockAndAboveTheVersionEdited()
        }
        override func testUnpreparedTypeAndWrongScopeAreRefused() async throws {
            try await super.testUnpreparedTypeAndWrongScopeAreRefused()
        }
        override func testTagsAreUniqueAcrossConcurrentWriters() async throws { try await super.testTagsAreUniqueAcrossConcurrentWriters() }
        override func testFullFetchPagesWithMoreComing() async throws { try await super.testFullFetchPagesWithMoreComing() }
        override func testFullFetchListsLiveRecordsOnlyAndOnlyItsZone() async throws {
            try await super.testFullFetchListsLiveRecordsOnlyAndOnlyItsZone()
        }
        override func testFetchSinceATokenGivesTheLatestStateOnceAndDeletions() async throws {
            try await super.testFetchSinceATokenGivesTheLatestStateOnceAndDeletions()
        }
        override func testUnreadableTokenExpires() async throws { try await super.testUnreadableTokenExpires() }
        override func testAnotherUsersPrivateZoneIsRefusedAndUnreadable() async throws {
            try await super.testAnotherUsersPrivateZoneIsRefusedAndUnreadable()
        }
        override func testPublicRecordsAreReadByAllAndWrittenByTheirCreatorOnly() async throws {
            try await super.testPublicRecordsAreReadByAllAndWrittenByTheirCreatorOnly()
        }
        override func testASharedZone_isReadByItsMembers_writtenByReadWriteOnes_andClosedWhenUnshared() async throws {
            try await super.testASharedZone_isReadByItsMembers_writtenByReadWriteOnes_andClosedWhenUnshared()
        }
        override func testABatchOfNewRecords_someMeetingARow_answersEachInOrder() async throws {
            try await super.testABatchOfNewRecords_someMeetingARow_answersEachInOrder()
        }
        override func testAFullFetchWhosePageEndsWithATable_listsTheNextTableWhole() async throws {
            try await super.testAFullFetchWhosePageEndsWithATable_listsTheNextTableWhole()
        }
        override func testScopeChangeIsRefused() async throws { try await super.testScopeChangeIsRefused() }
        override func testAssetsRoundTrip() async throws { try await super.testAssetsRoundTrip() }
        override func testAssetWithWrongBytesIsRejectedAndMissingOneIsNamed() async throws {
            try await super.testAssetWithWrongBytesIsRejectedAndMissingOneIsNamed()
        }

        /// The batch goes in one flight (BEGIN, statements, COMMIT): a value the
        /// server refuses aborts it, and the records are then saved one by one.
        func testAValueTheServerRefuses_isRefusedAlone_theOthersLand_andTheConnectionsStayUsable() async throws {
            let remote = try await remote()
            try server.psql("ALTER TABLE notes ADD CONSTRAINT short_title CHECK (length(title) < 20)")
            func note(_ name: String) -> CloudRecordID { CloudRecordID(zone: .private("alice"), type: "notes", name: name) }
            let results = try await remote.modify([
                .save(id: note("a"), baseTag: nil, fields: ["title": .text("short")], editedAt: Date()),
                .save(id: note("b"), baseTag: nil, fields: ["title": .text("a title far too long for the check")], editedAt: Date()),
                .save(id: note("c"), baseTag: nil, fields: ["title": .text("short too")], editedAt: Date()),
            ])
            XCTAssertEqual(results.count, 3)
            guard case .saved(let a) = results[0], case .refused(let b, let reason) = results[1], case .saved(let c) = results[2] else {
                return XCTFail("expected saved, refused, saved: \(results)")
            }
            XCTAssertEqual([a.id, b, c.id], [note("a"), note("b"), note("c")])
            XCTAssertTrue(reason.contains("short_title"), reason)
            XCTAssertEqual(
                try server.psql("SELECT string_agg(id, ',' ORDER BY id) FROM notes").trimmingCharacters(in: .whitespacesAndNewlines), "a,c")
            // Every pooled connection is out of its transaction: later batches and fetches work.
            for round in 0..<6 {
                let next = try await remote.modify([
                    .save(id: note("d\(round)"), baseTag: nil, fields: ["title": .text("ok")], editedAt: Date())
                ])
                guard case .saved = next.first else { return XCTFail("round \(round): \(next)") }
            }
            let listing = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 100)
            XCTAssertEqual(listing.changed.map(\.id.name).sorted(), ["a", "c", "d0", "d1", "d2", "d3", "d4", "d5"])
            // None is left in a transaction. Another client's transaction may be caught between two of
            // its statements (a gateway's push subscription checks zones): bounded, until none is.
            var open = ""
            for _ in 0..<50 {
                open = try server.psql("SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                if open == "0" { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            XCTAssertEqual(open, "0", "a connection stayed idle in a transaction for 5 s")
        }
    }
#endif  // Postgres
