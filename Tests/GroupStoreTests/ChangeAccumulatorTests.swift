import XCTest

@testable import GroupStore

/// Folding a transaction's rows by table, with table names matched as
/// SQLite matches them (ignoring ASCII case).
final class ChangeAccumulatorTests: XCTestCase {
    func testOneTable_isFoldedUnderItsName() {
        var accumulator = ChangeAccumulator()
        accumulator.add(entity: "Item", operation: .insert, key: .integer(1))
        accumulator.add(entity: "Item", operation: .update, key: .integer(1))
        accumulator.add(entity: "Item", operation: .delete, key: .integer(2))
        XCTAssertEqual(accumulator.changes, [EntityChange(entity: "Item", inserted: [.integer(1)], deleted: [.integer(2)])])
    }

    func testNamesDifferingInCaseOnly_areOneTable_inEveryOrder() {
        var accumulator = ChangeAccumulator()
        accumulator.add(entity: "Item", operation: .insert, key: .integer(1))
        accumulator.add(entity: "other", operation: .insert, key: .integer(5))
        accumulator.add(entity: "ITEM", operation: .delete, key: .integer(1))  // back to the first, another case
        accumulator.add(entity: "item", operation: .insert, key: .integer(2))
        accumulator.add(entity: "OTHER", operation: .update, key: .integer(6))
        XCTAssertEqual(
            accumulator.changes,
            [
                EntityChange(entity: "Item", inserted: [.integer(2)]),
                EntityChange(entity: "other", inserted: [.integer(5)], updated: [.integer(6)]),
            ])
    }

    func testASecondNameEqualToTheFirstIgnoringCase_rightAfterIt_isTheSameTable() {
        var accumulator = ChangeAccumulator()
        accumulator.add(entity: "t", operation: .insert, key: .integer(1))
        accumulator.add(entity: "T", operation: .update, key: .integer(1))
        accumulator.add(entity: "T", operation: .reset, key: .null)
        XCTAssertEqual(accumulator.changes, [EntityChange(entity: "t", inserted: [.integer(1)], reset: true)])
    }
}
