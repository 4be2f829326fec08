import Foundation
import GRDB
import GroupStore
import Subprocesses
import XCTest

/// Base of the change-capture tests: a reader member that collects saves,
/// and writers both inside the library and outside it (the `sqlite3` shell).
class CaptureTestCase: StoreTestCase {
    var database: String { group + "/store.sqlite" }

    /// Runs `sql` with the `sqlite3` shell, a writer outside the library, as
    /// one transaction (the shell commits each statement on its own otherwise,
    /// and a peer may see those commits apart or together).
    func shell(_ sql: String, transaction: Bool = true, file: StaticString = #filePath, line: UInt = #line) throws {
        let script = transaction ? "BEGIN; \(sql); COMMIT;" : sql
        let process = try Subprocess(URL(fileURLWithPath: "/usr/bin/sqlite3"), ["-bail", "-cmd", ".timeout 10000", database, script])
        let status = process.waitForExit(timeout: 60)
        XCTAssertEqual(status, 0, "sqlite3 failed on \(sql): \(process.errors)", file: file, line: line)
    }

    /// A started reader and its stream of saves.
    func reader(_ name: String = "reader", _ configure: (inout GroupConfiguration) -> Void = { _ in }) throws -> (GroupStore, SaveStream) {
        let store = try open(name, configure)
        let saves = store.saves()
        try store.startBlocking()
        return (store, saves)
    }

    /// Saves up to and including the one whose change of `entity` lists the
    /// sentinel key (written last by the test, so everything before it has
    /// been delivered).
    func saves(until sentinel: KeyValue, in entity: String, of stream: SaveStream, timeout: TimeInterval = 20) async throws -> [Save] {
        try await withDeadline(timeout, "key \(sentinel) of \(entity)") {
            var saves: [Save] = []
            for await save in stream {
                saves.append(save)
                if save.change(of: entity)?.inserted.contains(sentinel) == true { return saves }
            }
            return nil
        }
    }

    /// The union of what `saves` report for `entity`, folded in order.
    func folded(_ saves: [Save], _ entity: String) -> (inserted: Set<KeyValue>, updated: Set<KeyValue>, deleted: Set<KeyValue>, reset: Bool)
    {
        var result: (inserted: Set<KeyValue>, updated: Set<KeyValue>, deleted: Set<KeyValue>, reset: Bool) = ([], [], [], false)
        for save in saves {
            guard let change = save.change(of: entity) else { continue }
            result.inserted.formUnion(change.inserted)
            result.updated.formUnion(change.updated)
            result.deleted.formUnion(change.deleted)
            result.reset = result.reset || change.reset
        }
        return result
    }
}
