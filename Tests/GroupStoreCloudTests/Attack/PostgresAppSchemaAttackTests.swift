#if Postgres
    import Foundation
    import XCTest

    /// ``AppSchemaAttackTests`` on a PostgreSQL remote (each test restated:
    /// XCTest on Linux does not discover inherited test methods).
    final class PostgresAppSchemaAttackTests: AppSchemaAttackTests {
        override class var remoteKind: RemoteKind { .postgres }

        override func testAnAppTriggerOnOneColumn_doesNotMakeTwoRunningBridgesUploadForEver() throws {
            try super.testAnAppTriggerOnOneColumn_doesNotMakeTwoRunningBridgesUploadForEver()
        }
        override func testADerivedChangeLoopBetweenTwoBridges_isStoppedAndParkedWithAReason() throws {
            try super.testADerivedChangeLoopBetweenTwoBridges_isStoppedAndParkedWithAReason()
        }
        override func testNewerWins_aHostWhoseClockIsAnHourAhead_doesNotWinWithItsOlderEdit() throws {
            try super.testNewerWins_aHostWhoseClockIsAnHourAhead_doesNotWinWithItsOlderEdit()
        }
        override func testNewerWins_aHostWhoseClockIsAnHourBehind_winsWithItsNewerEdit() throws {
            try super.testNewerWins_aHostWhoseClockIsAnHourBehind_winsWithItsNewerEdit()
        }
        override func testAParentDeletedWhileAChildIsAdded_withoutOnDelete_convergesWithTheChildKeepingItsParent() throws {
            try super.testAParentDeletedWhileAChildIsAdded_withoutOnDelete_convergesWithTheChildKeepingItsParent()
        }
        override func testAColumnRenamedInOneGroup_isCarriedAndReported_andTheLocalErrorNamesTheTable() throws {
            try super.testAColumnRenamedInOneGroup_isCarriedAndReported_andTheLocalErrorNamesTheTable()
        }
    }
#endif  // Postgres
