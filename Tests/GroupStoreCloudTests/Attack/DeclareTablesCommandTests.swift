import Foundation
import XCTest

/// `groupstore cloud setup --group DIR --tables …`: declaring tables on a
/// remote without syncing a row (on PostgreSQL, what the schema's owner does
/// for public and shared tables: `PostgresFindingsTests`), and its misuse.
final class DeclareTablesCommandTests: AttackTestCase {
    func testSetupDeclaresTheGroupsTables_andRefusesTablesWithoutAGroup() throws {
        try exec("a", "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT); CREATE TABLE board(id TEXT PRIMARY KEY, body TEXT)")
        try exec("a", "INSERT INTO note VALUES ('n1', 'not uploaded by a declaration')")
        let declared = try groupstore([
            "cloud", "setup", "--remote", remotePath, "--group", group("a"), "--tables", "note", "--public-tables", "Board",
        ])
        XCTAssertEqual(declared.status, 0, declared.text)
        XCTAssertEqual(declared.output.last, "\(remotePath): declared note (private), board (public)")
        XCTAssertEqual(try remoteTypes(), ["board", "note"])
        XCTAssertEqual(try remoteNames("note"), [], "a declaration uploads no row")

        let misuses: [(arguments: [String], sentence: String)] = [
            (["--tables", "note"], "tables to declare need --group DIR"),
            (["--group", group("a")], "--group \(group("a")) is given but no tables"),
            (["--group", group("nowhere"), "--tables", "note"], "no group at \(group("nowhere"))"),
            (["--group", group("a"), "--tables", "missing"], "table missing does not exist in"),
        ]
        for (arguments, sentence) in misuses {
            let run = try groupstore(["cloud", "setup", "--remote", remotePath] + arguments)
            XCTAssertEqual(run.status, 1, "\(arguments): \(run.text)")
            XCTAssertTrue(run.errors.joined().contains(sentence), "\(arguments): \(run.text)")
            XCTAssertEqual(run.errors.count, 1, "\(arguments): one line: \(run.text)")
        }
    }
}
