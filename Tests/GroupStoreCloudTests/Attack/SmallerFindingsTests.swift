import Foundation
import XCTest

/// The smaller findings of the attack (issue 30) that need no particular
/// remote: a view given to `--tables`, and `groupstore status` once the
/// whole history is pruned.
final class SmallerFindingsTests: AttackTestCase {
    func testAViewGivenToTables_isReportedAsAView() throws {
        try exec("a", "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT); CREATE VIEW recent AS SELECT * FROM note")
        let run = try groupstore(cloud("sync", "a", tables: "recent"))
        XCTAssertEqual(run.status, 1, run.text)
        let message = run.errors.first ?? ""
        XCTAssertTrue(message.contains("recent is a view"), message)
        XCTAssertFalse(message.contains("does not exist"), message)
    }

    func testStatusOnceEverythingIsPruned_showsAHeadAtOrAfterThePrunedHorizon() throws {
        try exec("a", "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)")
        for index in 1...5 { try exec("a", "INSERT INTO note VALUES ('n\(index)', 'x')") }
        // The newest change is an outside writer's, which no member has closed yet.
        try shell("a", "INSERT INTO note VALUES ('from the shell', 'x')")
        let gc = try groupstore(["gc", "--group", group("a"), "--retention", "0"])
        XCTAssertEqual(gc.status, 0, gc.text)
        let run = try groupstore(["status", "--group", group("a"), "--format", "json"])
        XCTAssertEqual(run.status, 0, run.text)
        let status = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data((run.output.first ?? "").utf8)) as? [String: Any])
        let head = (status["head"] as? NSNumber)?.int64Value ?? -1
        let pruned = (status["prunedThrough"] as? NSNumber)?.int64Value ?? -1
        XCTAssertGreaterThan(pruned, 0, "\(status)")
        XCTAssertGreaterThanOrEqual(head, pruned, "head seq \(head) before what was pruned (\(pruned)): \(status)")
    }
}
