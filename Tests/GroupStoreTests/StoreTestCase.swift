import Foundation
import GRDB
import GroupStore
import XCTest

/// Base of in-process store tests: a fresh group directory, stores closed at the end.
class StoreTestCase: XCTestCase {
    var group = ""
    private var stores: [GroupStore] = []

    override func setUpWithError() throws {
        group = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString.prefix(8))").path
    }

    override func tearDownWithError() throws {
        for store in stores { store.closeBlocking() }
        stores = []
        try? FileManager.default.removeItem(atPath: group)
    }

    func open(_ member: String, _ configure: (inout GroupConfiguration) -> Void = { _ in }) throws -> GroupStore {
        var configuration = GroupConfiguration(directory: group, member: try MemberName(member))
        configuration.pruneInterval = nil
        configure(&configuration)
        let store = try GroupStore(configuration)
        stores.append(store)
        return store
    }

    /// The first `count` saves of `stream`, or a failure after `timeout`.
    func first(_ count: Int, of stream: SaveStream, timeout: TimeInterval = 20) async throws -> [Save] {
        try await withDeadline(timeout, "\(count) saves") {
            var saves: [Save] = []
            for await save in stream {
                saves.append(save)
                if saves.count == count { return saves }
            }
            return nil
        }
    }

    /// Returns once `condition` holds (looked at every 5 ms), or fails naming
    /// `what` after `seconds`: for state with no event to await.
    func waitUntil(_ what: String, seconds: TimeInterval = 20, _ condition: @escaping @Sendable () -> Bool) async throws {
        _ = try await withDeadline(seconds, what) {
            while !condition() { try await Task.sleep(for: .milliseconds(5)) }
            return true
        }
    }

    /// Runs `sql` through `store.write` and returns its transaction's
    /// sequence number (failing when it changed no tracked table).
    @discardableResult
    func writeSeq(_ store: GroupStore, _ sql: String, arguments: StatementArguments = StatementArguments()) async throws -> Int64 {
        let written = try await store.writeWithSequence { db in try db.execute(sql: sql, arguments: arguments) }
        guard let seq = written.seq else {
            XCTFail("no tracked table changed: \(sql)")
            throw CancellationError()
        }
        return seq
    }

    /// The text of `member`'s cursor file once it names `seq`, or a failure after 20 s.
    @discardableResult
    func waitForCursorFile(of member: String, at seq: Int64) async throws -> String {
        let path = group + "/members/\(member)/cursor"
        return try await withDeadline(20, "the cursor file of \(member) to reach seq \(seq)") {
            while true {
                let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
                if text.split(separator: " ").first == Substring("\(seq)") { return text }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    /// What `body` returns, or a test failure naming `what` if it returns
    /// `nil` or takes longer than `seconds`.
    func withDeadline<T: Sendable>(
        _ seconds: TimeInterval, _ what: String, _ body: @escaping @Sendable () async throws -> T?
    ) async throws -> T {
        let result = try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        guard let result else {
            XCTFail("timed out after \(seconds) s waiting for \(what)")
            throw CancellationError()
        }
        return result
    }
}
