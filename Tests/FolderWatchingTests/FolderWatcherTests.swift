import FolderWatching
import Foundation
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

final class FolderWatcherTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("watcher-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: root)
    }

    func testReportsAFileRenamedIntoTheWatchedFolder_notItsTemporaryName() throws {
        let inbox = try makeFolder("inbox")
        let staging = try makeFolder("staging")
        let events = EventLog()
        let watcher = try FolderWatcher(handler: events.record)
        try watcher.watch(inbox, for: .movedIn)
        watcher.start()

        _ = FileManager.default.createFile(atPath: staging + "/a.tmp", contents: Data("x".utf8))
        XCTAssertEqual(rename(staging + "/a.tmp", inbox + "/a.json"), 0)

        let event = try events.waitFor("the rename") { $0.first { $0.kind == .movedIn } }
        XCTAssertEqual(event, FolderWatcher.Event(kind: .movedIn, path: inbox, name: "a.json"))
        XCTAssertFalse(events.all.contains { $0.name == "a.tmp" })
    }

    func testReportsANewSubfolder_asADirectoryEvent() throws {
        let members = try makeFolder("members")
        let events = EventLog()
        let watcher = try FolderWatcher(handler: events.record)
        try watcher.watch(members, for: [.created, .movedIn])
        watcher.start()

        _ = try makeFolder("members/late")
        let event = try events.waitFor("the new folder") { $0.first { $0.name == "late" } }
        XCTAssertEqual(event.kind, .created)
        XCTAssertTrue(event.isDirectory)
    }

    func testReportsWatchEnded_whenTheWatchedFolderIsDeleted_andCanWatchItAgainOnceRecreated() throws {
        let folder = try makeFolder("doomed")
        let events = EventLog()
        let watcher = try FolderWatcher(handler: events.record)
        try watcher.watch(folder, for: .movedIn)
        watcher.start()

        try FileManager.default.removeItem(atPath: folder)
        let ended = try events.waitFor("the end of the watch") { $0.first { $0.kind == .watchEnded } }
        XCTAssertEqual(ended.path, folder)
        XCTAssertFalse(watcher.isWatching(folder))

        _ = try makeFolder("doomed")
        try watcher.watch(folder, for: .movedIn)
        let staging = try makeFolder("staging")
        _ = FileManager.default.createFile(atPath: staging + "/b", contents: nil)
        XCTAssertEqual(rename(staging + "/b", folder + "/b"), 0)
        _ = try events.waitFor("an event from the re-created folder") { $0.first { $0.kind == .movedIn && $0.name == "b" } }
    }

    func testReportsOverflow_whenTheHandlerFallsBehindTheKernelQueue() throws {
        let folder = try makeFolder("busy")
        let limit =
            Int(
                (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16384
        let events = EventLog()
        let firstBatch = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let blocked = BlockOnce()
        let watcher = try FolderWatcher { batch in
            events.record(batch)
            if blocked.first() {
                firstBatch.signal()
                release.wait()
            }
        }
        try watcher.watch(folder, for: .created)
        watcher.start()

        _ = FileManager.default.createFile(atPath: folder + "/first", contents: nil)
        XCTAssertEqual(firstBatch.wait(timeout: .now() + 30), .success, "the handler never ran")
        // The handler is blocked: more events than the queue holds pile up in the kernel.
        for index in 0..<(limit + 100) { try touch(folder + "/f\(index)") }
        release.signal()
        _ = try events.waitFor("the overflow event") { $0.first { $0.kind == .overflow } }
    }

    func testPause_holdsEventsBack_thenDeliversThem_withRepeatedChangesMergedByTheKernel() throws {
        let file = root + "/busy"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: nil))
        let events = EventLog()
        let watcher = try FolderWatcher(handler: events.record)
        try watcher.watch(file, for: .modified, target: .file)
        watcher.start()
        // One change seen first, so the reader is waiting for the next one
        // when the pause is asked for (and must hold that one back too).
        let first = try XCTUnwrap(FileHandle(forWritingAtPath: file))
        first.write(Data("w".utf8))
        try first.close()
        _ = try events.waitFor("the change before the pause") { $0.first { $0.kind == .modified } }
        let seenBefore = events.all.count

        let pausedAt = Date()
        XCTAssertTrue(watcher.queue.sync { watcher.pause(for: 0.3) })
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: file))
        for _ in 0..<50 { handle.write(Data("x".utf8)) }
        try handle.close()
        _ = try events.waitFor("the changes after the pause") { $0.count > seenBefore ? true : nil }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(pausedAt), 0.3, "an event was delivered while paused")
        XCTAssertLessThan(
            events.all.dropFirst(seenBefore).filter { $0.kind == .modified }.count, 50, "the repeated changes were not merged")

        // Reading resumed: a change after the pause is reported too.
        let before = events.all.count
        let again = try XCTUnwrap(FileHandle(forWritingAtPath: file))
        again.write(Data("y".utf8))
        try again.close()
        _ = try events.waitFor("a change after the pause") { $0.count > before ? true : nil }
    }

    func testPauseUnwatching_takesTheWatchOffInTheKernel_thenPutsItBackWithOneModifiedEvent() throws {
        let file = root + "/wal"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: nil))
        let other = try makeFolder("other")
        let events = EventLog()
        let watcher = try FolderWatcher(handler: events.record)
        try watcher.watch(file, for: .modified, target: .file)
        try watcher.watch(other, for: .created)
        watcher.start()
        XCTAssertEqual(try kernelWatches(of: file), 1)

        // Long enough for what the test does meanwhile on a loaded machine.
        let pause = 3.0
        let pausedAt = Date()
        let started = watcher.queue.sync { watcher.pause(for: pause, unwatching: [file]) }
        XCTAssertTrue(started)
        XCTAssertFalse(watcher.queue.sync { watcher.pause(for: pause, unwatching: [file]) }, "a second pause started")
        // Off in the kernel (writers to it queue nothing), on for the caller.
        XCTAssertEqual(try kernelWatches(of: file), 0, "the watch is still in the kernel during the pause")
        XCTAssertTrue(watcher.isWatching(file))
        XCTAssertTrue(watcher.watchedPaths.contains(file))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: file))
        for _ in 0..<50 { handle.write(Data("x".utf8)) }
        try handle.close()
        // The other watch stays on (its event is held back by the pause).
        XCTAssertEqual(close(open(other + "/new", O_CREAT | O_WRONLY, 0o644)), 0)

        _ = try events.waitFor("the batch after the pause") { $0.count >= 2 ? true : nil }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(pausedAt), pause, "an event was delivered while paused")
        XCTAssertEqual(events.all.filter { $0.path == file }, [FolderWatcher.Event(kind: .modified, path: file)])
        XCTAssertEqual(events.all.filter { $0.path == other }, [FolderWatcher.Event(kind: .created, path: other, name: "new")])
        XCTAssertEqual(try kernelWatches(of: file), 1, "the watch was not put back")

        // Put back with its mask: a change after the pause is reported.
        let before = events.all.count
        let again = try XCTUnwrap(FileHandle(forWritingAtPath: file))
        again.write(Data("y".utf8))
        try again.close()
        let next = try events.waitFor("a change after the pause") { $0.count > before ? Array($0.dropFirst(before)) : nil }
        XCTAssertEqual(next.first, FolderWatcher.Event(kind: .modified, path: file))
    }

    func testPauseUnwatching_aFileRemovedMeanwhile_endsItsWatch_andAnUnwatchMeanwhileIsKept() throws {
        let gone = root + "/gone"
        let dropped = root + "/dropped"
        for file in [gone, dropped] { XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: nil)) }
        let events = EventLog()
        let watcher = try FolderWatcher(handler: events.record)
        try watcher.watch(gone, for: .modified, target: .file)
        try watcher.watch(dropped, for: .modified, target: .file)
        watcher.start()
        // Long enough for what the test does meanwhile on a loaded machine.
        XCTAssertTrue(watcher.queue.sync { watcher.pause(for: 2, unwatching: [gone, dropped]) })
        try FileManager.default.removeItem(atPath: gone)
        watcher.unwatch(dropped)
        XCTAssertFalse(watcher.isWatching(dropped))
        _ = try events.waitFor("the end of the removed file's watch") { $0.first { $0.path == gone } }
        XCTAssertEqual(events.all.filter { $0.path == gone }, [FolderWatcher.Event(kind: .watchEnded, path: gone)])
        XCTAssertFalse(watcher.isWatching(gone))
        XCTAssertFalse(watcher.isWatching(dropped))
        XCTAssertEqual(try kernelWatches(of: dropped), 0, "an unwatched path was watched again")
        // Nothing for the unwatched path, even after it changes.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: dropped))
        handle.write(Data("x".utf8))
        try handle.close()
        let probe = try makeFolder("probe")
        try watcher.watch(probe, for: .created)
        XCTAssertEqual(close(open(probe + "/p", O_CREAT | O_WRONLY, 0o644)), 0)
        _ = try events.waitFor("the probe's event") { $0.first { $0.path == probe } }
        XCTAssertEqual(events.all.filter { $0.path == dropped }, [])
    }

    /// How many inotify watches of this process are on `path`'s inode, as the
    /// kernel lists them in `/proc/self/fdinfo`.
    private func kernelWatches(of path: String) throws -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else { throw CocoaError(.fileNoSuchFile) }
        let inode = "ino:" + String(status.st_ino, radix: 16) + " "
        var count = 0
        for fd in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) == "anon_inode:inotify",
                let info = try? String(contentsOfFile: "/proc/self/fdinfo/" + fd, encoding: .utf8)
            else { continue }
            count += info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") && $0.contains(inode) }.count
        }
        return count
    }

    func testRefusesToWatchASymbolicLink() throws {
        let real = try makeFolder("real")
        let link = root + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let watcher = try FolderWatcher { _ in }
        XCTAssertThrowsError(try watcher.watch(link, for: .movedIn)) { error in
            XCTAssertEqual((error as? FolderWatcherError)?.code, .notADirectory)
            XCTAssertTrue("\(error)".contains(link), "the message should name the path: \(error)")
        }
    }

    func testWatchingAMissingPath_throwsPathNotFound() throws {
        let watcher = try FolderWatcher { _ in }
        XCTAssertThrowsError(try watcher.watch(root + "/missing", for: .movedIn)) { error in
            XCTAssertEqual((error as? FolderWatcherError)?.code, .pathNotFound)
        }
    }

    func testWatchesASingleFileForModification() throws {
        let file = root + "/db-wal"
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        let events = EventLog()
        let watcher = try FolderWatcher(handler: events.record)
        try watcher.watch(file, for: .modified, target: .file)
        watcher.start()
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: file))
        handle.write(Data("commit".utf8))
        try handle.close()
        let event = try events.waitFor("the modification") { $0.first { $0.kind == .modified } }
        XCTAssertEqual(event.path, file)
        XCTAssertNil(event.name)
    }

    func testUnwatch_stopsEventsWithoutReportingWatchEnded() throws {
        let quiet = try makeFolder("quiet")
        let loud = try makeFolder("loud")
        let events = EventLog()
        let watcher = try FolderWatcher(handler: events.record)
        try watcher.watch(quiet, for: .created)
        try watcher.watch(loud, for: .created)
        watcher.start()
        watcher.unwatch(quiet)
        try touch(quiet + "/ignored")
        try touch(loud + "/seen")
        _ = try events.waitFor("the event in the folder still watched") { $0.first { $0.name == "seen" } }
        XCTAssertFalse(events.all.contains { $0.path == quiet }, "events of an unwatched folder: \(events.all)")
    }

    func testCancelOnTheQueue_noHandlerCallFollows_whileAnotherWatcherStillSeesTheFolder() throws {
        let folder = try makeFolder("shared")
        let cancelled = EventLog()
        let first = try FolderWatcher(handler: cancelled.record)
        try first.watch(folder, for: .created)
        first.start()
        let witness = EventLog()
        let second = try FolderWatcher(handler: witness.record)
        try second.watch(folder, for: .created)
        second.start()

        try touch(folder + "/before")
        _ = try cancelled.waitFor("the first event") { $0.first { $0.name == "before" } }
        first.queue.sync { first.cancel() }
        try touch(folder + "/after")
        // The second watcher reads the same kernel events: once it has the
        // file, the cancelled one would have had it too.
        _ = try witness.waitFor("the event after the cancel, in the other watcher") { $0.first { $0.name == "after" } }
        XCTAssertFalse(cancelled.all.contains { $0.name == "after" }, "a cancelled watcher called its handler: \(cancelled.all)")
    }

    func testWatchersStartedAndCancelled_leaveNoDescriptorsOpen() throws {
        func openDescriptors() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }
        let folder = try makeFolder("many")
        let before = try openDescriptors()
        for index in 0..<100 {
            let watcher = try FolderWatcher { _ in }
            try watcher.watch(folder, for: .created)
            if index % 2 == 0 { watcher.start() }
            watcher.cancel()
        }
        // Each reading thread closes its descriptors as it ends, soon after
        // the cancel; the count is looked at until then.
        let deadline = Date().addingTimeInterval(20)
        var now = try openDescriptors()
        while now > before && Date() < deadline {
            usleep(5_000)
            now = try openDescriptors()
        }
        XCTAssertLessThanOrEqual(now, before, "descriptors left open by 100 cancelled watchers: \(now - before)")
    }

    /// Creates an empty file in place (Foundation's `createFile` writes a
    /// temporary file and renames it, which is another event).
    private func touch(_ path: String) throws {
        let fd = open(path, O_CREAT | O_WRONLY, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        close(fd)
    }

    private func makeFolder(_ name: String) throws -> String {
        let path = root + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Events recorded from the watcher's queue, awaited from the test.
/// `@unchecked Sendable`: `events` is guarded by `condition`.
private final class EventLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var events: [FolderWatcher.Event] = []

    func record(_ batch: [FolderWatcher.Event]) {
        condition.withLock {
            events += batch
            condition.broadcast()
        }
    }

    var all: [FolderWatcher.Event] { condition.withLock { events } }

    func waitFor<T>(_ what: String, timeout: TimeInterval = 30, _ find: ([FolderWatcher.Event]) -> T?) throws -> T {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let found = find(events) { return found }
            if !condition.wait(until: deadline), find(events) == nil {
                XCTFail("timed out waiting for \(what); saw \(events.count) events: \(events.prefix(5))")
                throw CancellationError()
            }
        }
    }
}

/// True for the first caller only.
/// `@unchecked Sendable`: `done` is guarded by `lock`.
private final class BlockOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func first() -> Bool {
        lock.withLock {
            defer { done = true }
            return !done
        }
    }
}
