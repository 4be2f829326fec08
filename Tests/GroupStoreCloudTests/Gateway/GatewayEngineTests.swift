#if Gateway
    import Foundation
    import GroupStoreCloud

    // The bridge's round-trip and shared-zone tests, run again with the groups
    // syncing through a gateway process in front of a PostgreSQL server: public
    // and shared scopes behave as on the direct remote. (Each test is restated:
    // XCTest on Linux does not discover inherited test methods.)

    final class GatewayRoundTripTests: RoundTripTests {
        override class var remoteKind: RemoteKind { .gateway }
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

    final class GatewaySharedZoneTests: SharedZoneTests {
        override class var remoteKind: RemoteKind { .gateway }
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
#endif  // Gateway
