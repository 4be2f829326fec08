import Foundation
import GroupStore
import XCTest

@testable import GroupStoreCloud
@testable import GroupStoreCloudEmbedded

#if Postgres
    @testable import GroupStoreCloudPostgres
#endif

/// A migration that has shipped has run on databases that will never run
/// it again: editing it changes nothing there and splits the schema in two.
/// Each schema the package owns is checked against the checksums of its
/// shipped migrations, in order.
final class MigrationChecksumTests: XCTestCase {
    /// Identifier and SHA-256 of the SQL of every shipped migration, in order.
    static let shipped: [(schema: String, migrations: [(String, String)])] = [
        (
            "the sync state",
            [
                ("groupstore.cloud.v1", "400ea0a6dabe0ee1a772438378535a74ba176f19c5c29b20b947929a31e5eb8a"),
                ("groupstore.cloud.v2", "872b480bf1526bc577e02db05fc2951364ca78d0f00e9c5730838c1856b2685b"),
                ("groupstore.cloud.v3", "801af965acc1a907d1db072232234cbe5022b1521e079ad0b9eb6bbdb0deef3c"),
                ("groupstore.cloud.v4", "4a8aced79b4bf1db11270e9b7b17fa973854c141a06fe5faa35d3289dba6a781"),
            ]
        ),
        (
            "the embedded remote",
            [
                ("groupstore.remote.v1", "62c1ea87d752a137ec533d79ae13d5d04a2fe909f0c6e4ae0da73ee5b79b37f2"),
                ("groupstore.remote.v2", "016e8a194a5a24283d76061cccf2d95f5103759dc3ddc146d88813b1a85e7e1d"),
                ("groupstore.remote.v3", "299b66d987ade2007f1d199f40bd83beb5669f2b07bfc876fde9937f96f22170"),
                ("groupstore.remote.v4", "c8c616b4131e95b39ff7e7af092696bfdee706708a49d05353fd2285c37faefa"),
            ]
        ),
        (
            "the PostgreSQL remote",
            [
                ("groupstore.postgres.v3", "a8b697d66484c72f5ac7128cab840a3b0d34a50e9ff6ac5afacc9a0441f71153"),
                ("groupstore.postgres.v4", "d66d3f53471db5ffeda17a593cc6fe92662411736da14ccbefa78b32050bee91"),
                ("groupstore.postgres.zone-hints", "91e15bbf46f258707d7a3d578c5d64c8aad05bd7f05aefab14f97ca25a36c73d"),
                ("groupstore.postgres.declared-types", "1267ab522a3f41a42e30910b0c716f3c3ca77fd420bb5b5a46fdbfa66560ce8d"),
                ("groupstore.postgres.delete-times", "5891fadbf85b80f5c3b7d8e503bb030532e62aa07bab0d4ae1aca5f3316d9c1e"),
                ("groupstore.postgres.history-guard", "2c9dfbf3b2625805ebfa9e97e95f49685db43b1af426745d4a322d6e235a1b81"),
                ("groupstore.postgres.subscriptions", "f1a9e217cccc9bf28b5adbd6fbed16c216ecfb79e8a5b256d9e460b44e776168"),
                ("groupstore.postgres.rows-written-plan", "a3199b1315a4a040c04295bc4e2d5760735f050c591f05d1285753dbbcf696ce"),
                ("groupstore.postgres.fleet", "cbc192e244da170f5fa479be2496e04e5db5fb38babe79052ed428b5eff26cb9"),
                ("groupstore.postgres.write-plans", "d262a9684b76a0c1bf06809083bb1d63e8322156f84c61ccacd5c66896455327"),
                ("groupstore.postgres.host-reports", "1eeaad48df6178b3febbaadf60d1ff34ab3b9a6d5504fec6db71381ea303be44"),
            ]
        ),
    ]

    func testNoShippedMigrationWasEdited_andEachSchemaKeepsItsOrder() {
        var current = [SyncStateSchema.migrations, EmbeddedRemoteSchema.migrations]
        #if Postgres
            current.append(PostgresServerSchema.migrations)
        #endif
        for ((schema, shipped), migrations) in zip(Self.shipped, current) {
            XCTAssertGreaterThanOrEqual(migrations.count, shipped.count, "\(schema): a shipped migration was removed")
            for ((identifier, checksum), migration) in zip(shipped, migrations) {
                XCTAssertEqual(migration.identifier, identifier, "\(schema): the shipped migrations were reordered or renamed")
                XCTAssertEqual(
                    migration.checksum, checksum,
                    "\(schema): migration \(identifier) was edited after it shipped (its SQL now hashes to \(migration.checksum)): "
                        + "restore it and add a new migration instead")
            }
            XCTAssertEqual(
                migrations.count, shipped.count,
                "\(schema): new migrations \(migrations.dropFirst(shipped.count).map { "\($0.identifier) \($0.checksum)" }): record them here once they ship"
            )
            XCTAssertEqual(Set(migrations.map(\.identifier)).count, migrations.count, "\(schema): two migrations share an identifier")
        }
    }
}
