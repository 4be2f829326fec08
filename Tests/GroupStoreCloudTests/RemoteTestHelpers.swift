import Foundation
import GroupStoreCloud
import XCTest

/// Calls on a remote for the remote tests (the contract suite and the
/// embedded remote's own), failing the test when a call does not answer as
/// the helper expects.
extension XCTestCase {
    func note(_ name: String, owner: String = "alice") -> CloudRecordID {
        CloudRecordID(zone: .private(owner), type: "notes", name: name)
    }

    func post(_ name: String) -> CloudRecordID {
        CloudRecordID(zone: .public, type: "posts", name: name)
    }

    @discardableResult
    func create(_ remote: any CloudDatabase, _ id: CloudRecordID, _ fields: CloudFields) async throws -> CloudRecord {
        let results = try await remote.modify([.save(id: id, baseTag: nil, fields: fields, editedAt: Date())])
        guard case .saved(let record) = results.first else {
            XCTFail("expected \(id) saved, got \(results)")
            throw CancellationError()
        }
        return record
    }

    func save(_ remote: any CloudDatabase, _ id: CloudRecordID, base: String?, _ fields: CloudFields) async throws -> CloudModifyResult {
        let results = try await remote.modify([.save(id: id, baseTag: base, fields: fields, editedAt: Date())])
        XCTAssertEqual(results.count, 1)
        return results[0]
    }

    func delete(_ remote: any CloudDatabase, _ id: CloudRecordID, base: String?) async throws -> CloudModifyResult {
        let results = try await remote.modify([.delete(id: id, baseTag: base, editedAt: Date())])
        XCTAssertEqual(results.count, 1)
        return results[0]
    }

    /// The error `body` throws, as a `CloudSyncError` (a failure if it returns or throws another).
    func cloudError(
        _ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line
    ) async -> CloudSyncError? {
        do {
            try await body()
            XCTFail("expected a CloudSyncError, nothing was thrown", file: file, line: line)
            return nil
        } catch let error as CloudSyncError {
            return error
        } catch {
            XCTFail("expected a CloudSyncError, got \(error)", file: file, line: line)
            return nil
        }
    }

    func fetchAll(
        _ remote: any CloudDatabase, _ zone: CloudZone, since token: CloudChangeToken?, limit: Int = 100
    ) async throws -> (changed: [CloudRecord], deleted: [CloudRecordID], token: CloudChangeToken, pages: Int) {
        var changed: [CloudRecord] = []
        var deleted: [CloudRecordID] = []
        var token = token
        var pages = 0
        while true {
            let batch = try await remote.fetchChanges(in: zone, since: token, limit: limit)
            pages += 1
            XCTAssertLessThanOrEqual(batch.changed.count + batch.deleted.count, limit)
            changed += batch.changed
            deleted += batch.deleted
            token = batch.token
            if !batch.moreComing { return (changed, deleted, batch.token, pages) }
            XCTAssertLessThan(pages, 1000, "paging does not end")
        }
    }
}
