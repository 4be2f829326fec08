import Foundation
import GRDB
import XCTest

@testable import GroupStoreCloud

/// A subscription's filter: the subset of SQL it takes, what it refuses
/// with a sentence, and the same answer from SQLite as the expression means.
final class CloudFilterTests: XCTestCase {
    private func refusal(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try CloudFilter(text)
            XCTFail("\(text) was taken", file: file, line: line)
            return ""
        } catch let error as CloudSyncError {
            XCTAssertEqual(error.code, .invalidConfiguration, file: file, line: line)
            return error.message
        } catch {
            XCTFail("\(error)", file: file, line: line)
            return ""
        }
    }

    func testWhatAFilterMayHold_parses_andNamesItsColumnsClaimsAndParameters() throws {
        let filter = try CloudFilter(
            "site = claim('site') AND (done = 0 OR priority >= param('min')) AND status NOT IN ('gone', 'x''y') AND \"Due At\" IS NOT NULL"
                + " AND lower(name) LIKE 'a%' AND weight NOT BETWEEN -1.5 AND 2e3 AND coalesce(note, '') <> ''")
        XCTAssertEqual(filter.columns, ["site", "done", "priority", "status", "Due At", "name", "weight", "note"])
        XCTAssertEqual(filter.claims, ["site"])
        XCTAssertEqual(filter.parameters, ["min"])
        XCTAssertNoThrow(try CloudFilter("true"))
        XCTAssertNoThrow(try CloudFilter("NOT (a == 1) AND b != 2 AND c || 'x' = 'yx' AND d % 2 = 1"))
    }

    func testWhatIsNotAPureFilterOfTheRow_isRefusedWithASentence() {
        XCTAssertTrue(refusal("site = 7; DELETE FROM job").contains("; (one expression"), refusal("site = 7; DELETE FROM job"))
        XCTAssertTrue(refusal("site IN (SELECT site FROM secrets)").contains("SELECT"))
        XCTAssertTrue(refusal("random() > 0").contains("calls random()"))
        XCTAssertTrue(refusal("created > now()").contains("calls now()"))
        XCTAssertTrue(refusal("EXISTS (SELECT 1)").contains("EXISTS"))
        XCTAssertTrue(refusal("").contains("is empty"))
        XCTAssertTrue(refusal("site = ").contains("ends where a value should be"))
        XCTAssertTrue(refusal("site = 'open").contains("unterminated string"))
        XCTAssertTrue(refusal("site = 7 7").contains("more after a complete expression"))
        XCTAssertTrue(refusal("claim(site) = 1").contains("claim('NAME')"))
        XCTAssertTrue(refusal("site @ 7").contains("@"))
        XCTAssertTrue(refusal("name = 'a\u{0}b'").contains("NUL"))
        let deep =
            String(repeating: "(", count: 300) + "1" + String(repeating: ")", count: 300) + String(repeating: " OR a = 1", count: 600)
        XCTAssertTrue(refusal(deep).contains("terms"))
    }

    func testAColumnTheTableLacks_isRefusedNamingTheTable() throws {
        let filter = try CloudFilter("site = 7 AND colour = 'red'")
        XCTAssertThrowsError(try filter.check(columns: ["id", "site"], table: "job")) { error in
            XCTAssertEqual(
                (error as? CloudSyncError)?.message, "the subscription of table job names column colour, which job does not have")
        }
        XCTAssertNoThrow(try filter.check(columns: ["ID", "Site", "COLOUR"], table: "job"))
    }

    /// Rendered for SQLite and evaluated there, row by row, as the expression means.
    func testSQLiteRendering_evaluatesAsTheExpressionMeans() throws {
        let rows: [[String: DatabaseValue]] = [
            ["site": 7.databaseValue, "done": 0.databaseValue, "name": "Alpha".databaseValue, "weight": 1.5.databaseValue],
            ["site": 7.databaseValue, "done": 1.databaseValue, "name": "beta".databaseValue, "weight": DatabaseValue.null],
            ["site": 8.databaseValue, "done": 0.databaseValue, "name": "gamma's".databaseValue, "weight": 3.databaseValue],
        ]
        let cases: [(String, [Bool])] = [
            ("site = 7 AND done = 0", [true, false, false]),
            ("site = 7 AND done = FALSE", [true, false, false]),
            ("weight IS NULL", [false, true, false]),
            ("weight > 1", [true, false, true]),
            ("NOT (weight > 1)", [false, false, false]),
            ("lower(name) LIKE 'a%' OR name = 'gamma''s'", [true, false, true]),
            ("site IN (8, 9)", [false, false, true]),
            ("weight BETWEEN 1 AND 2", [true, false, false]),
            ("coalesce(weight, 0) + site >= 8.5", [true, false, true]),
            ("site = param('site')", [false, false, true]),
        ]
        let queue = try DatabaseQueue()
        let sql = FilterSQL(dialect: .sqlite, column: { "\"" + $0 + "\"" })
        for (text, expected) in cases {
            let filter = try CloudFilter(text).binding(claims: [:], parameters: ["site": .integer(8)])
            let got = try queue.read { db in
                try rows.map { row in
                    let columns = row.keys.sorted()
                    let select = columns.map { "? AS \"\($0)\"" }.joined(separator: ", ")
                    return try Bool.fetchOne(
                        db, sql: "SELECT coalesce(\(sql.sql(filter)), 0) FROM (SELECT \(select))",
                        arguments: StatementArguments(columns.map { row[$0]! })) ?? false
                }
            }
            XCTAssertEqual(got, expected, text)
        }
    }

    func testPostgreSQLRendering_givesALiteralItsColumnsType() throws {
        let kinds: [String: CloudColumn.Kind] = ["done": .boolean, "due": .date, "site": .integer]
        let sql = FilterSQL(dialect: .postgres, column: { "\"" + $0 + "\"" }, kind: { kinds[$0] })
        XCTAssertEqual(sql.sql(try CloudFilter("done = 0")), "((\"done\" = false))")
        XCTAssertEqual(sql.sql(try CloudFilter("1 = done")), "((true = \"done\"))")
        XCTAssertEqual(sql.sql(try CloudFilter("due > '2026-01-01'")), "((\"due\" > '2026-01-01'::timestamp(3)))")
        XCTAssertEqual(sql.sql(try CloudFilter("site IN (1, 2)")), "((\"site\" IN (1, 2)))")
        XCTAssertEqual(sql.sql(try CloudFilter("name = 'it''s'")), "((\"name\" = 'it''s'))")
        XCTAssertEqual(sql.sql(try CloudFilter("site = claim('site')").binding(claims: [:], parameters: [:])), "((\"site\" = NULL))")
    }
}
