import Foundation
import GRDB
import XCTest

/// A subscription seen from outside (`cloud run --where`): a row moved out
/// of host B's subset by host A (`groupstore exec`, then `cloud sync`)
/// reaches a member of B that iterates its saves (`groupstore watch`) as a
/// save removing it, by `cloud`; `cloud status` shows the subscription.
/// (An extension: a subclass would run every test of the class again.)
extension CloudProcessTests {
    func testARowMovedOutOfTheSubset_reachesAWatchingMember_asASaveByCloud() throws {
        try createNotes(groupA)
        try createNotes(groupB)
        try execIn(groupA, "INSERT INTO note VALUES ('n1', 'one', 7), ('n2', 'two', 8)")
        let syncA = try spawn("groupstore", cloudArguments("sync", groupA), name: "cloud sync A")
        XCTAssertEqual(try syncA.waitForExit(timeout: 60), 0, "\(syncA.errors)")

        let watcher = try spawn(
            "groupstore", ["watch", "--group", groupB, "--member", "reporter", "--format", "jsonl"], name: "watch B")
        let bridgeB = try bridge(groupB, name: "cloud run B", extra: ["--where", "note: n = param('site')", "--param", "site=7"])
        try waitForEvent(bridgeB, "B's first fetch") { $0["event"] as? String == "fetched" }
        XCTAssertEqual(try notes(groupB), ["n1": "one"], "B holds its subset only")

        // A moves n1 out of B's subset.
        try execIn(groupA, "UPDATE note SET n = 9 WHERE id = 'n1'")
        let again = try spawn("groupstore", cloudArguments("sync", groupA), name: "cloud sync A again")
        XCTAssertEqual(try again.waitForExit(timeout: 60), 0, "\(again.errors)")
        try waitForEvent(bridgeB, "B's move-out") { $0["event"] as? String == "movedOut" && $0["table"] as? String == "note" }
        let removal = try watcher.wait("the watching member's save removing n1", timeout: 30) { lines, _, _ in
            lines.lazy.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.first { save in
                let changes = save["changes"] as? [[String: Any]] ?? []
                return changes.contains { ($0["deleted"] as? [Any])?.contains { "\($0)" == "n1" } == true }
            }
        }
        XCTAssertEqual(removal["author"] as? String, "cloud", "the removal is the bridge's save: \(removal)")
        XCTAssertEqual(try notes(groupB), [:])
        XCTAssertEqual(Set(try remoteNotes().keys), ["n1", "n2"], "never uploaded as a delete")

        bridgeB.send(SIGTERM)
        XCTAssertEqual(try bridgeB.waitForExit(timeout: 30), 0, "\(bridgeB.errors)")
        watcher.send(SIGTERM)
        _ = try watcher.waitForExit(timeout: 30)
        let status = try cloudStatus(groupB)
        let subscriptions = status["subscriptions"] as? [[String: Any]] ?? []
        XCTAssertEqual(subscriptions.count, 1, "\(status)")
        XCTAssertEqual(subscriptions.first?["table"] as? String, "note")
        XCTAssertEqual(subscriptions.first?["filter"] as? String, "(\"n\" = 7)")
        XCTAssertEqual(subscriptions.first?["rows"] as? Int, 0)
    }
}
