#if Postgres
    import Foundation
    import GroupStoreCloud

    // The bridge's round-trip, conflict and echo tests, run again with the
    // groups syncing through a real PostgreSQL server. (Each test is restated:
    // XCTest on Linux does not discover inherited test methods. The test of a
    // conflict that never settles is not: it needs the embedded remote's fault
    // injection.)

    final class PostgresRoundTripTests: RoundTripTests {
        override class var remoteKind: RemoteKind { .postgres }
        override func testEveryTypeNullsAndRelationships_reachTheOtherGroupIntact() async throws {
            try await super.testEveryTypeNullsAndRelationships_reachTheOtherGroupIntact()
        }
        override func testLargeBlobTravelsAsAnAsset_andIsNotUploadedAgainWhenUnchanged() async throws {
            try await super.testLargeBlobTravelsAsAnAsset_andIsNotUploadedAgainWhenUnchanged()
        }
        override func testUUIDKeysAndALinkTableBetweenThem_roundTrip() async throws {
            try await super.testUUIDKeysAndALinkTableBetweenThem_roundTrip()
        }
        override func testTextWithANulByteAndTextThatIsNotUTF8_arriveByteForByte() async throws {
            try await super.testTextWithANulByteAndTextThatIsNotUTF8_arriveByteForByte()
        }
    }

    final class PostgresConflictTests: ConflictTests {
        override class var remoteKind: RemoteKind { .postgres }
        override func testServerWins_sameField_andDifferentFields() async throws {
            try await super.testServerWins_sameField_andDifferentFields()
        }
        override func testServerWins_differentFields_keepsTheServerRecord() async throws {
            try await super.testServerWins_differentFields_keepsTheServerRecord()
        }
        override func testClientWins_sameField() async throws { try await super.testClientWins_sameField() }
        override func testClientWins_atUpload_whenTheFetchLagged() async throws {
            try await super.testClientWins_atUpload_whenTheFetchLagged()
        }
        override func testServerWins_atUpload_whenTheFetchLagged() async throws {
            try await super.testServerWins_atUpload_whenTheFetchLagged()
        }
        override func testNewerWins_theLaterEditWins_eitherWay() async throws { try await super.testNewerWins_theLaterEditWins_eitherWay() }
        override func testNewerWins_anOlderLocalEditLoses() async throws { try await super.testNewerWins_anOlderLocalEditLoses() }
        override func testFieldMerge_editsToDifferentFieldsBothSurvive() async throws {
            try await super.testFieldMerge_editsToDifferentFieldsBothSurvive()
        }
        override func testFieldMerge_sameFieldTakesTheServers() async throws { try await super.testFieldMerge_sameFieldTakesTheServers() }
        override func testCallerDecides_withServerClientAndAncestor() async throws {
            try await super.testCallerDecides_withServerClientAndAncestor()
        }
        override func testDeleteAgainstEdit_serverWins_deletes() async throws { try await super.testDeleteAgainstEdit_serverWins_deletes() }
        override func testDeleteAgainstEdit_clientWins_keepsTheEdit() async throws {
            try await super.testDeleteAgainstEdit_clientWins_keepsTheEdit()
        }
        override func testDeleteAgainstEdit_newerWins_keepsTheEdit() async throws {
            try await super.testDeleteAgainstEdit_newerWins_keepsTheEdit()
        }
        override func testDeleteAgainstEdit_fieldMerge_keepsTheEdit() async throws {
            try await super.testDeleteAgainstEdit_fieldMerge_keepsTheEdit()
        }
        override func testEditAgainstDelete_serverWins_bringsTheRowBack() async throws {
            try await super.testEditAgainstDelete_serverWins_bringsTheRowBack()
        }
        override func testEditAgainstDelete_clientWins_deletesEverywhere() async throws {
            try await super.testEditAgainstDelete_clientWins_deletesEverywhere()
        }
    }

    final class PostgresEchoTests: EchoTests {
        override class var remoteKind: RemoteKind { .postgres }
        override func testACascadeIntoARowTheSameFetchWrote_isUploadedToo() async throws {
            try await super.testACascadeIntoARowTheSameFetchWrote_isUploadedToo()
        }
        override func testACascadeIntoARowTheSameFetchInserted_isUploadedToo() async throws {
            try await super.testACascadeIntoARowTheSameFetchInserted_isUploadedToo()
        }
        override func testAppliedRemoteChanges_areNotUploadedAgain() async throws {
            try await super.testAppliedRemoteChanges_areNotUploadedAgain()
        }
        override func testWhatAnAppTriggerDidToAnAppliedRow_isUploaded() async throws {
            try await super.testWhatAnAppTriggerDidToAnAppliedRow_isUploaded()
        }
        override func testACascadeCausedByAnAppliedDelete_isUploaded() async throws {
            try await super.testACascadeCausedByAnAppliedDelete_isUploaded()
        }
    }

    final class PostgresSharedZoneTests: SharedZoneTests {
        override class var remoteKind: RemoteKind { .postgres }
        override func testReadWriteAndReadOnlyMembers_andUnsharingRemovesTheRowsFromTheGroup() async throws {
            try await super.testReadWriteAndReadOnlyMembers_andUnsharingRemovesTheRowsFromTheGroup()
        }
        override func testAnEditNotUploadedWhenTheZoneIsUnshared_staysAndIsParked() async throws {
            try await super.testAnEditNotUploadedWhenTheZoneIsUnshared_staysAndIsParked()
        }
        override func testChangingTheSharedZone_leavesTheOldZoneAndFetchesTheNewOne() async throws {
            try await super.testChangingTheSharedZone_leavesTheOldZoneAndFetchesTheNewOne()
        }
        override func testASharedTableReferencingAPrivateOne_isRefused_andSharedTablesNeedAZone() async throws {
            try await super.testASharedTableReferencingAPrivateOne_isRefused_andSharedTablesNeedAZone()
        }
    }
#endif  // Postgres
