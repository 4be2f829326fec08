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
        for store in stores { store.close() }
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
