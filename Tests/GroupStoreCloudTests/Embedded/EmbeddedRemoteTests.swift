import Foundation
import GRDB
import GroupStoreCloud
import XCTest

@testable import GroupStoreCloudEmbedded

/// The embedded remote on real files in a temporary directory: tags, tokens,
/// tombstones, scopes, assets, batch limits, faults, push hints and bad files.
final class EmbeddedRemoteTests: XCTestCase {
    private var directory = ""
    private var path: String { directory + "/cloud.sqlite" }
    /// The remotes running (their push-hint watches), stopped at the end of each test.
    private var running: [Task<Void, Never>] = []

    private let notes = CloudRecordType(
        name: "notes", scope: .private,
        columns: [
            CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
            CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
            CloudColumn(name: "body", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
        ])
    private let posts = CloudRecordType(
        name: "posts", scope: .public,
        columns: [
            CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
            CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
        ])

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("remote-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        for task in running { task.cancel() }
        for task in running { await task.value }
        running = []
        try await super.tearDown()
    }

    override func tearDownWithError() throws {
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: - Helpers

    /// A remote acting as `user`, running (its push hints watched) until the test ends.
    private func remote(_ user: String = "alice", faults: EmbeddedRemoteFaults = .init()) async throws -> EmbeddedRemote {
        let remote = try EmbeddedRemote(path: path, user: user, faults: faults)
        try await remote.prepare([notes, posts])
        running.append(Task { try? await remote.run() })
        return remote
    }

    /// The error opening the remote at `path` throws.
    private func openError(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> CloudSyncError? {
        do {
            _ = try EmbeddedRemote(path: path, user: "alice")
            XCTFail("expected \(path) to be refused", file: file, line: line)
            return nil
        } catch let error as CloudSyncError {
            return error
        } catch {
            XCTFail("expected a CloudSyncError, got \(error)", file: file, line: line)
            return nil
        }
    }

    /// Every page of `zone` from `token`.

    /// Whether `stream` yields within `seconds`.
    private func yields(_ stream: AsyncStream<Void>, within seconds: Double) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next() != nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private func overwrite(_ path: String, with bytes: [UInt8]) throws {
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
    }

    private func removeRemoteFiles() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    // MARK: - Opening and setup

    func testCreatesTheFileAndReportsPathAndUser() async throws {
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        let remote = try EmbeddedRemote(path: path, user: "alice")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(remote.displayName, path)
        let account = try await remote.account()
        XCTAssertEqual(account, "alice")
        // Opening again finds the same remote.
        let again = try EmbeddedRemote(path: path, user: "bob")
        let bobAccount = try await again.account()
        XCTAssertEqual(bobAccount, "bob")
    }

    func testSetupCreatesThenIsIdempotent() throws {
        let first = try EmbeddedRemote.setup(path: path)
        XCTAssertTrue(first.contains("created"), first)
        XCTAssertTrue(first.contains(path), first)
        XCTAssertFalse(first.contains("\n"))
        let second = try EmbeddedRemote.setup(path: path)
        XCTAssertTrue(second.contains("up to date"), second)
        XCTAssertNoThrow(try EmbeddedRemote(path: path, user: "alice"))
    }

    func testEmptyUserIsRefused() {
        XCTAssertThrowsError(try EmbeddedRemote(path: path, user: "")) { error in
            XCTAssertEqual((error as? CloudSyncError)?.code, .invalidConfiguration)
        }
    }

    // MARK: - Tags and conflicts
    func testCompactLogExpiresOlderTokensOnly() async throws {
        let remote = try await remote()
        let a = try await create(remote, note("a"), [:])
        let old = try await fetchAll(remote, .private("alice"), since: nil).token
        _ = try await delete(remote, note("a"), base: a.tag)
        try await create(remote, note("b"), [:])
        try await create(remote, note("c"), [:])
        let recent = try await fetchAll(remote, .private("alice"), since: old).token
        try await remote.compactLog(keepingLast: 0)
        let error = await cloudError { _ = try await remote.fetchChanges(in: .private("alice"), since: old, limit: 10) }
        XCTAssertEqual(error?.code, .tokenExpired)
        XCTAssertTrue(error?.message.contains(path) ?? false, error?.message ?? "")
        let fine = try await remote.fetchChanges(in: .private("alice"), since: recent, limit: 10)
        XCTAssertTrue(fine.changed.isEmpty && fine.deleted.isEmpty)
        // A full listing, paged, still works over records older than the horizon.
        let all = try await fetchAll(remote, .private("alice"), since: nil, limit: 1)
        XCTAssertEqual(all.changed.map(\.id.name), ["b", "c"])
        // And changes after compaction flow from the new token.
        try await create(remote, note("d"), [:])
        let next = try await fetchAll(remote, .private("alice"), since: all.token)
        XCTAssertEqual(next.changed.map(\.id.name), ["d"])
    }

    func testARecreatedRemoteExpiresTokens() async throws {
        let remote = try await remote()
        try await create(remote, note("a"), [:])
        let token = try await fetchAll(remote, .private("alice"), since: nil).token
        removeRemoteFiles()
        let fresh = try await self.remote()
        let error = await cloudError { _ = try await fresh.fetchChanges(in: .private("alice"), since: token, limit: 10) }
        XCTAssertEqual(error?.code, .tokenExpired)
        // The instance opened on the old file notices the new one too.
        let oldError = await cloudError { _ = try await remote.fetchChanges(in: .private("alice"), since: token, limit: 10) }
        XCTAssertEqual(oldError?.code, .tokenExpired)
        let empty = try await fetchAll(remote, .private("alice"), since: nil)
        XCTAssertEqual(empty.changed, [])
    }
    // MARK: - Assets

    // MARK: - Batches

    func testTooLargeBatchesAreRefusedWhole() async throws {
        let faults = EmbeddedRemoteFaults()
        faults.maxBatchRecords = 3
        let remote = try await remote(faults: faults)
        let four = (0..<4).map { CloudRecordChange.save(id: note("n\($0)"), baseTag: nil, fields: [:], editedAt: Date()) }
        let error = await cloudError { _ = try await remote.modify(four) }
        XCTAssertEqual(error?.code, .batchTooLarge)
        let big = CloudRecordChange.save(
            id: note("big"), baseTag: nil, fields: ["body": .text(String(repeating: "x", count: 2_100_000))], editedAt: Date())
        let sizeError = await cloudError { _ = try await remote.modify([big]) }
        XCTAssertEqual(sizeError?.code, .batchTooLarge)
        let nothing = try await fetchAll(remote, .private("alice"), since: nil)
        XCTAssertEqual(nothing.changed, [])
        let three = try await remote.modify(Array(four.prefix(3)))
        XCTAssertEqual(three.count, 3)
    }

    func testDefaultBatchLimitIs400() async throws {
        let remote = try await remote()
        XCTAssertEqual(remote.faults.maxBatchRecords, 400)
        let changes = (0..<401).map { CloudRecordChange.save(id: note("n\($0)"), baseTag: nil, fields: [:], editedAt: Date()) }
        let error = await cloudError { _ = try await remote.modify(changes) }
        XCTAssertEqual(error?.code, .batchTooLarge)
        let results = try await remote.modify(Array(changes.prefix(400)))
        XCTAssertEqual(results.count, 400)
    }

    // MARK: - Faults

    func testFailNextAndRateLimit() async throws {
        let faults = EmbeddedRemoteFaults()
        let remote = try await remote(faults: faults)
        faults.failNext(2)
        faults.rateLimitNext(1, retryAfter: 1.5)
        for _ in 0..<2 {
            let error = await cloudError {
                _ = try await remote.modify([.save(id: note("n"), baseTag: nil, fields: [:], editedAt: Date())])
            }
            XCTAssertEqual(error?.code, .transient)
            XCTAssertEqual(error?.isTransient, true)
        }
        let limited = await cloudError { _ = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 10) }
        XCTAssertEqual(limited?.code, .rateLimited)
        XCTAssertEqual(limited?.retryAfter, 1.5)
        // Nothing was applied by the failed calls; the next call works.
        let empty = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 10)
        XCTAssertEqual(empty.changed, [])
        try await create(remote, note("n"), [:])
    }

    func testExpireTokensOnce() async throws {
        let faults = EmbeddedRemoteFaults()
        let remote = try await remote(faults: faults)
        let token = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 10).token
        faults.expireTokensOnce()
        // A fetch with no token does not use the fault up.
        _ = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 10)
        let error = await cloudError { _ = try await remote.fetchChanges(in: .private("alice"), since: token, limit: 10) }
        XCTAssertEqual(error?.code, .tokenExpired)
        _ = try await remote.fetchChanges(in: .private("alice"), since: token, limit: 10)
    }

    func testConflictOnEverySaveNeverSettles() async throws {
        let faults = EmbeddedRemoteFaults()
        let remote = try await remote(faults: faults)
        var record = try await create(remote, note("n"), ["title": .text("one")])
        faults.conflictOnEverySave = true
        for _ in 0..<3 {
            let result = try await save(remote, note("n"), base: record.tag, ["title": .text("mine")])
            guard case .conflict(_, let server?, _) = result else { return XCTFail("expected a conflict, got \(result)") }
            XCTAssertNotEqual(server.tag, record.tag)
            XCTAssertEqual(server.fields, ["title": .text("one")])
            record = server
        }
        faults.conflictOnEverySave = false
        guard case .saved = try await save(remote, note("n"), base: record.tag, ["title": .text("mine")]) else {
            return XCTFail("expected a save once the fault is off")
        }
    }

    func testFaultsFromTheEnvironment() async throws {
        let faults = EmbeddedRemoteFaults(environment: [
            EmbeddedRemoteFaults.environmentVariable:
                "fail=1, ratelimit=1,retry-after=0.25,expire=1,maxbatch=50,conflict-always=1,bogus=7,fail2,=3"
        ])
        XCTAssertEqual(faults.maxBatchRecords, 50)
        XCTAssertTrue(faults.conflictOnEverySave)
        let remote = try EmbeddedRemote(path: path, user: "alice", faults: faults)
        let first = await cloudError { try await remote.prepare([self.notes]) }
        XCTAssertEqual(first?.code, .transient)
        let second = await cloudError { try await remote.prepare([self.notes]) }
        XCTAssertEqual(second?.code, .rateLimited)
        XCTAssertEqual(second?.retryAfter, 0.25)
        try await remote.prepare([notes])
        let token = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 10).token
        let expired = await cloudError { _ = try await remote.fetchChanges(in: .private("alice"), since: token, limit: 10) }
        XCTAssertEqual(expired?.code, .tokenExpired)

        let none = EmbeddedRemoteFaults(environment: [:])
        XCTAssertEqual(none.maxBatchRecords, 400)
        XCTAssertFalse(none.conflictOnEverySave)
        let junk = EmbeddedRemoteFaults(environment: [EmbeddedRemoteFaults.environmentVariable: "fail=x,maxbatch=-4,,="])
        XCTAssertEqual(junk.maxBatchRecords, 400)
    }

    // MARK: - Push hints

    func testPushHintWhenAnotherInstanceWrites() async throws {
        let watching = try await remote("alice")
        let writer = try await remote("bob")
        let hints = watching.pushHints()
        try await create(writer, note("n", owner: "bob"), [:])
        let hinted = await yields(hints, within: 10)
        XCTAssertTrue(hinted, "no push hint within 10 s after another instance wrote \(path)")
    }

    /// The hint is the writer's announcement after its commit, not the
    /// writes to the `-wal` before it: a fetch the hint wakes sees the write
    /// (on a disk, the `-wal` is written before its sync and the commit).
    func testAPushHintComesOnceTheWriteIsVisible() async throws {
        let watching = try await remote("alice")
        let writer = try await remote("alice")
        var token = try await watching.fetchChanges(in: .private("alice"), since: nil, limit: 1000).token
        for index in 0..<20 {
            let hints = watching.pushHints()
            let id = note("n\(index)")
            let write = Task { try await writer.modify([.save(id: id, baseTag: nil, fields: [:], editedAt: Date())]) }
            let hinted = await yields(hints, within: 10)
            XCTAssertTrue(hinted, "no push hint within 10 s after \(id) was written")
            let batch = try await watching.fetchChanges(in: .private("alice"), since: token, limit: 1000)
            _ = try await write.value
            guard batch.changed.contains(where: { $0.id == id }) else {
                return XCTFail("the hint for \(id) came before its write was visible (write \(index + 1) of 20)")
            }
            token = batch.token
        }
    }

    /// The push-hint watch belongs to the remote's `run()`: one inotify
    /// instance however many hint streams, released when `run()` returns,
    /// which finishes the streams.
    func testARunningRemoteWatchesOnce_andItsEndReleasesTheWatchAndEndsTheStreams() async throws {
        let remote = try EmbeddedRemote(path: path, user: "alice")
        let before = inotifyDescriptors()
        let streams = (0..<5).map { _ in remote.pushHints() }
        let run = Task { try? await remote.run() }
        let deadline = Date().addingTimeInterval(10)
        while inotifyDescriptors() == before, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(inotifyDescriptors(), before + 1, "a running remote watches with one inotify instance")
        run.cancel()
        await run.value
        for stream in streams {
            var iterator = stream.makeAsyncIterator()
            while await iterator.next() != nil {}
        }
        // Cancelling the dispatch source closes the descriptor on the watcher's queue.
        while inotifyDescriptors() > before, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(inotifyDescriptors(), before, "the remote's run ended and its watch still holds an inotify descriptor")
    }

    private func inotifyDescriptors() -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))?.contains("inotify") ?? false
        }.count
    }

    // MARK: - Bad remotes

    func testMissingDirectoryIsABadRemote() {
        let path = directory + "/nowhere/cloud.sqlite"
        let error = openError(path)
        XCTAssertEqual(error?.code, .badRemote)
        XCTAssertEqual(error?.message, "no directory \(directory)/nowhere for the remote \(path)")
    }

    func testDirectoryIsABadRemote() throws {
        let path = directory + "/adir"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let error = openError(path)
        XCTAssertEqual(error?.code, .badRemote)
        XCTAssertTrue(error?.message.contains(path) ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("directory") ?? false, error?.message ?? "")
    }

    func testGarbageFileIsABadRemote() throws {
        _ = FileManager.default.createFile(atPath: path, contents: Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) }))
        let error = openError(path)
        XCTAssertEqual(error?.code, .badRemote)
        XCTAssertTrue(error?.message.contains(path) ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("not a SQLite database") ?? false, error?.message ?? "")
        let tiny = directory + "/tiny.sqlite"
        _ = FileManager.default.createFile(atPath: tiny, contents: Data("hi".utf8))
        XCTAssertEqual(openError(tiny)?.code, .badRemote)
    }

    func testSQLiteDatabaseThatIsNotARemoteIsABadRemoteAndLeftAlone() throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)") }
        try queue.close()
        let error = openError(path)
        XCTAssertEqual(error?.code, .badRemote)
        XCTAssertTrue(error?.message.contains(path) ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("not a GroupStore remote") ?? false, error?.message ?? "")
        let mode = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        XCTAssertEqual(mode, "delete", "the foreign database was switched to WAL")

        let other = directory + "/other.sqlite"
        let foreign = try DatabaseQueue(path: other)
        try foreign.write {
            try $0.execute(sql: "CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('kind', 'something else')")
        }
        try foreign.close()
        let metaError = openError(other)
        XCTAssertEqual(metaError?.code, .badRemote)
        XCTAssertTrue(metaError?.message.contains(other) ?? false, metaError?.message ?? "")
    }

    func testNewerFormatIsABadRemote() throws {
        _ = try EmbeddedRemote.setup(path: path)
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "UPDATE meta SET value = '99' WHERE key = 'format'") }
        try queue.close()
        let error = openError(path)
        XCTAssertEqual(error?.code, .badRemote)
        XCTAssertTrue(error?.message.contains("format 99") ?? false, error?.message ?? "")
    }

    func testUnreadableFileIsABadRemote() throws {
        try XCTSkipIf(getuid() == 0, "root reads any file")
        _ = try EmbeddedRemote.setup(path: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: path)
        let error = openError(path)
        XCTAssertEqual(error?.code, .badRemote)
        XCTAssertTrue(error?.message.contains(path) ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("permission") ?? false, error?.message ?? "")
    }

    func testGarbageWrittenOverAnOpenRemoteFailsCleanly() async throws {
        let remote = try await remote()
        try await create(remote, note("a"), ["title": .text("a")])
        try overwrite(path, with: (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
        let fetch = await cloudError { _ = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 10) }
        XCTAssertEqual(fetch?.code, .badRemote)
        XCTAssertTrue(fetch?.message.contains(path) ?? false, fetch?.message ?? "")
        let modify = await cloudError {
            _ = try await remote.modify([.save(id: self.note("b"), baseTag: nil, fields: [:], editedAt: Date())])
        }
        XCTAssertEqual(modify?.code, .badRemote)
        let assets = await cloudError { _ = try await remote.missingAssets(["x"]) }
        XCTAssertEqual(assets?.code, .badRemote)
        let compact = await cloudError { try await remote.compactLog(keepingLast: 0) }
        XCTAssertEqual(compact?.code, .badRemote)
    }

    func testRemoteReplacedByGarbageOrDeletedFailsCleanly() async throws {
        let remote = try await remote()
        try await create(remote, note("a"), [:])
        // Replaced by garbage (a new file renamed over it).
        let replacement = directory + "/replacement"
        _ = FileManager.default.createFile(atPath: replacement, contents: Data((0..<8000).map { UInt8(truncatingIfNeeded: $0 &* 29) }))
        XCTAssertEqual(rename(replacement, path), 0)
        let replaced = await cloudError { _ = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 10) }
        XCTAssertEqual(replaced?.code, .badRemote)
        XCTAssertTrue(replaced?.message.contains(path) ?? false, replaced?.message ?? "")
        // Garbage behind a valid SQLite header: SQLite may still serve pages
        // from the old -wal; whatever happens, no crash and only CloudSyncErrors.
        var bytes = EmbeddedRemoteFile.sqliteMagic
        bytes += (0..<8000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        _ = FileManager.default.createFile(atPath: replacement, contents: Data(bytes))
        XCTAssertEqual(rename(replacement, path), 0)
        for _ in 0..<2 {
            do {
                _ = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 10)
                _ = try await remote.modify([.save(id: note("b"), baseTag: nil, fields: [:], editedAt: Date())])
            } catch {
                XCTAssertTrue(error is CloudSyncError, "\(error)")
            }
        }
        removeRemoteFiles()
        let gone = await cloudError {
            _ = try await remote.modify([.save(id: self.note("b"), baseTag: nil, fields: [:], editedAt: Date())])
        }
        XCTAssertEqual(gone?.code, .badRemote)
        XCTAssertTrue(gone?.message.contains(path) ?? false, gone?.message ?? "")
    }

    func testDamagedRowsAreABadRemoteNotACrash() async throws {
        let remote = try await remote()
        let a = try await create(remote, note("a"), [:])
        let queue = try DatabaseQueue(path: path)
        try await queue.write { try $0.execute(sql: "UPDATE records SET fields = 'not json', edited_at = 'soon'") }
        try queue.close()
        let fetch = await cloudError { _ = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 10) }
        XCTAssertEqual(fetch?.code, .badRemote)
        XCTAssertTrue(fetch?.message.contains(path) ?? false, fetch?.message ?? "")
        let modify = await cloudError {
            _ = try await remote.modify([.save(id: self.note("a"), baseTag: a.tag, fields: [:], editedAt: Date())])
        }
        XCTAssertEqual(modify?.code, .badRemote)
    }
}
