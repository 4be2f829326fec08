#if Gateway
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import XCTest

    /// The remote contract, and the PostgreSQL remote's own test of a batch the
    /// server refuses in part, through a gateway process in front of a
    /// PostgreSQL server (each test restated: XCTest on Linux does not always
    /// discover inherited test methods).
    final class GatewayRemoteContractTests: PostgresRemoteContractTests {
        override class var remoteKind: RemoteKind { .gateway }
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

        override func testAValueTheServerRefuses_isRefusedAlone_theOthersLand_andTheConnectionsStayUsable() async throws {
            try await super.testAValueTheServerRefuses_isRefusedAlone_theOthersLand_andTheConnectionsStayUsable()
        }
    }
#endif  // Gateway
