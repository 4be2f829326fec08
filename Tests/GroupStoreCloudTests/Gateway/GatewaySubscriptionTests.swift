#if Gateway && Postgres
    import Foundation
    import GRDB
    import GroupStore
    import GroupStoreGateway
    import XCTest

    @testable import GroupStoreCloud

    /// ``SubscriptionTests`` through a gateway in front of PostgreSQL: the
    /// client sends its filters (parameters bound), the gateway parses them
    /// again and the server evaluates them as the token's role. Then what only
    /// a gateway does: bind `claim(…)` from the token it verified.
    final class GatewaySubscriptionTests: SubscriptionTests {
        override class var remoteKind: RemoteKind { .gateway }
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

        /// A device's token says its site; the filter reads `claim('site')`:
        /// the device syncs its site's rows, and a parameter of the same name
        /// it sets changes nothing. A remote reached directly has no claims
        /// and refuses such a filter with a sentence.
        func testAClaimOfTheVerifiedToken_choosesTheRows_notAParameterOfTheSameName() async throws {
            let a = try open("a", schema: Self.schema)
            try await a.write { db in
                try db.execute(sql: "INSERT INTO job VALUES ('j1', 7, 'one'), ('j2', 8, 'two'), ('j3', 7, 'three')")
            }
            try await sync("a", where: nil)

            let token = try GatewayToken.mint(secretFile: gatewaySecret.path, role: "alice", claims: ["site": .integer(7)])
            let device = try open("device", schema: Self.schema)
            var viaGateway = try configuration("device", tables: ["job"], remote: try gatewayRemote(token: token))
            viaGateway.subscriptions = ["job": try CloudFilter("site = claim('site')")]
            viaGateway.subscriptionParameters = ["site": .integer(8)]
            let summary = try await CloudSync(viaGateway).syncOnce(complete: false)
            XCTAssertNil(summary.error)
            let held = try await ids(device)
            XCTAssertEqual(held, ["j1", "j3"], "the token's site, not the parameter the device set")

            var direct = try configuration("a", tables: ["job"], remote: try pgRemote(user: "alice"))
            direct.subscriptions = ["job": try CloudFilter("site = claim('site')")]
            let refused = try await CloudSync(direct).syncOnce(complete: false)
            let error = try XCTUnwrap(refused.error, "a claim on a direct remote was not refused")
            XCTAssertTrue(error.contains("reads claim('site'), which only a gateway gives"), error)
        }

        /// A token's `where` claim restricts (``GatewayIdentity/restrictions``):
        /// a device that asks for every row (no subscription, or `TRUE`) reads
        /// its site's rows only, and a row that leaves its site leaves the
        /// device, by `cloud`, as a move out of a subscription would.
        func testATokensWhereClaim_restrictsEveryRead_whateverTheDeviceAsks() async throws {
            let a = try open("a", schema: Self.schema)
            try await a.write { db in
                try db.execute(sql: "INSERT INTO job VALUES ('j1', 7, 'one'), ('j2', 8, 'two'), ('j3', 7, 'three')")
            }
            try await sync("a", where: nil)
            let token = try GatewayToken.mint(
                secretFile: gatewaySecret.path, role: "alice", claims: ["site": .integer(7)],
                restrictions: ["job": try CloudFilter("site = claim('site')")])
            var devices: [String: GroupStore] = [:]
            for (name, asked) in [("plain", nil), ("wide", "TRUE"), ("other", "site = 8 OR site = 7")] as [(String, String?)] {
                let device = try open(name, schema: Self.schema)
                devices[name] = device
                var viaGateway = try configuration(name, tables: ["job"], remote: try gatewayRemote(token: token))
                if let asked { viaGateway.subscriptions = ["job": try CloudFilter(asked)] }
                let summary = try await CloudSync(viaGateway).syncOnce(complete: false)
                XCTAssertNil(summary.error)
                let held = try await ids(device)
                XCTAssertEqual(held, ["j1", "j3"], "\(name): the token's restriction, whatever the device asked for")
            }

            try await a.write { db in try db.execute(sql: "UPDATE job SET site = 8 WHERE id = 'j1'") }
            try await sync("a", where: nil)
            let plain = try XCTUnwrap(devices["plain"])
            let summary = try await CloudSync(try configuration("plain", tables: ["job"], remote: try gatewayRemote(token: token)))
                .syncOnce(complete: false)
            XCTAssertNil(summary.error)
            let held = try await ids(plain)
            XCTAssertEqual(held, ["j3"], "j1 left the token's site")
            let removedByCloud = try await deleted(by: "cloud", in: plain)
            XCTAssertEqual(removedByCloud, ["j1"], "removed by the bridge, not uploaded as a delete")
            let kept = try await ids(a)
            XCTAssertEqual(kept, ["j1", "j2", "j3"])
        }
    }
#endif  // Gateway && Postgres
