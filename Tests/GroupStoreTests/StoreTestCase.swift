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
        try await withThrowingTaskGroup(of: [Save]?.self) { group in
            group.addTask {
                var saves: [Save] = []
                for await save in stream {
                    saves.append(save)
                    if saves.count == count { break }
                }
                return saves
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let result = try await group.next()!
            group.cancelAll()
            guard let saves = result, saves.count == count else {
                XCTFail("timed out after \(timeout) s waiting for \(count) saves; got \(result ?? [])")
                throw CancellationError()
            }
            return saves
        }
    }
}
