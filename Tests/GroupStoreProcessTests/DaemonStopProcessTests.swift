import Foundation
import Subprocesses
import XCTest

/// A daemon built as the README shows, stopped gracefully while its app is
/// working on a save: the save in hand counts in either service order, so no
/// save is handled twice across stops and none is lost; a save whose
/// handling fails is not a crash loop; and a store set up so that its saves
/// reach nobody says so in its log.
final class DaemonStopProcessTests: ProcessTestCase {
    private let table = "CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, author TEXT NOT NULL, n INTEGER NOT NULL)"

    private func daemon(_ order: String, _ extra: [String] = [], logLevel: String = "warning") throws -> ChildProcess {
        let child = try spawn(
            "groupstore-peer", ["--group", group, "--member", "daemon", "--service-order", order, "--log-level", logLevel] + extra,
            name: "daemon \(order)")
        try child.waitForStderr("peer: daemon ready")
        return child
    }

    /// Eight stops by `signal`, each while the app works on a save (20 to
    /// 150 ms per save), with a save committed while it is down before each
    /// start: every save is printed by exactly one of the runs.
    private func checkStopsAreExactlyOnce(order: String, signal: Int32) throws {
        try exec("writer", table)
        // The member joins (a new member starts at the present).
        let joining = try daemon(order)
        joining.send(signal)
        XCTAssertEqual(try joining.waitForExit(timeout: 10), 0, "\(joining.errors.suffix(5))")
        var committed: [Int] = []
        var printed: [PrintedSave] = []
        for stop in 0..<8 {
            committed.append(try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', \(2 * stop))"))
            let milliseconds = 20 + stop * 130 / 7
            let running = try daemon(order, ["--handler-ms", "\(milliseconds)"])
            let inHand = try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', \(2 * stop + 1))")
            committed.append(inHand)
            try running.waitForStderr("peer: handling seq \(inHand)")
            running.send(signal)
            XCTAssertEqual(try running.waitForExit(timeout: 10), 0, "stop \(stop): \(running.errors.suffix(5))")
            XCTAssertTrue(running.errors.contains("peer: handled seq \(inHand)"), "stop \(stop): the save in hand was not finished")
            printed += try saves(running.output)
        }
        // A last run gets what is left (nothing, if every stop recorded its save in hand).
        let last = try daemon(order)
        let closing = try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', -1)")
        committed.append(closing)
        printed += try saves(last.waitForLines(1)).filter { $0.seq <= closing }
        let seqs = printed.map { Int($0.seq) }
        XCTAssertEqual(seqs, committed, "\(order), signal \(signal): every save printed once, in order, across 8 stops")
        XCTAssertEqual(Set(seqs).count, seqs.count, "duplicates: \(seqs)")
    }

    func testStoppingByTheAppFirstOrder_onSIGTERM_whileASaveIsInHand_isExactlyOnce() throws {
        try checkStopsAreExactlyOnce(order: "app-first", signal: SIGTERM)
    }

    func testStoppingByTheStoreFirstOrder_onSIGTERM_whileASaveIsInHand_isExactlyOnce() throws {
        try checkStopsAreExactlyOnce(order: "store-first", signal: SIGTERM)
    }

    func testStoppingByTheAppFirstOrder_onSIGINT_whileASaveIsInHand_isExactlyOnce() throws {
        try checkStopsAreExactlyOnce(order: "app-first", signal: SIGINT)
    }

    func testStoppingByTheStoreFirstOrder_onSIGINT_whileASaveIsInHand_isExactlyOnce() throws {
        try checkStopsAreExactlyOnce(order: "store-first", signal: SIGINT)
    }

    /// The README's pattern for a save whose handling fails (logged, not
    /// rethrown): the daemon goes on, and a restart does not bring the
    /// failing save back.
    func testASaveWhoseHandlingThrows_isLoggedAndPassed_notACrashLoop() throws {
        try exec("writer", table)
        let first = try daemon("app-first", ["--failing-author", "poison"])
        let poison = try execSeq("poison", "INSERT INTO items(author, n) VALUES ('poison', 0)")
        let good = try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', 1)")
        try first.waitForStderr("peer: save \(poison) not handled: save \(poison) cannot be handled")
        XCTAssertEqual(try saves(first.waitForLines(2)).map(\.seq), [Int64(poison), Int64(good)])
        first.send(SIGTERM)
        XCTAssertEqual(try first.waitForExit(timeout: 10), 0, "the daemon stays up through a failing save: \(first.errors.suffix(5))")

        let second = try daemon("app-first", ["--failing-author", "poison"])
        let later = try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', 2)")
        XCTAssertEqual(try saves(second.waitForLines(1)).map(\.seq), [Int64(later)], "the failing save came back after a restart")
        XCTAssertFalse(second.errors.contains { $0.contains("not handled") }, "\(second.errors.suffix(5))")
    }

    /// The store in the `ServiceGroup`, in either order: the app's
    /// subscription may ask before the store's `run()` starts it, and that
    /// is not reported as a store nobody runs.
    func testTheNotRunLine_isAbsentWhenTheStoreRunsInEitherOrder() throws {
        try exec("writer", table)
        for order in ["app-first", "store-first"] {
            let running = try daemon(order, logLevel: "info")
            let seq = try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', 1)")
            XCTAssertEqual(try saves(running.waitForLines(1)).last?.seq, Int64(seq))
            // The line would come within a second of the first subscription.
            let said = running.process.wait(timeout: 3) { _, errors, _ in
                errors.contains { $0.contains("a saves() subscriber started delivery") } ? true : nil
            }
            XCTAssertNil(said, "\(order): \(running.errors.suffix(5))")
            running.send(SIGTERM)
            XCTAssertEqual(try running.waitForExit(timeout: 10), 0)
        }
    }

    /// The store left out of the `ServiceGroup`: its subscription starts it,
    /// so saves arrive anyway, and within about a second the log says
    /// nobody runs it.
    func testAStoreNothingRuns_deliversToItsSubscriberAnyway_andTheLogSaysItWasNotRun() throws {
        try exec("writer", table)
        let started = Date()
        let running = try daemon("app-first", ["--store-not-run"], logLevel: "info")
        var seqs: [Int64] = []
        for n in 1...3 { seqs.append(Int64(try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', \(n))"))) }
        XCTAssertEqual(try saves(running.waitForLines(3)).map(\.seq), seqs, "saves arrive anyway")
        try running.waitForStderr("a saves() subscriber started delivery: the store was not run", timeout: 10)
        XCTAssertLessThan(Date().timeIntervalSince(started), 8, "said late")
        running.send(SIGTERM)
        XCTAssertEqual(try running.waitForExit(timeout: 10), 0)
    }

    private func observer(_ setup: String) throws -> ChildProcess {
        let child = try spawn(
            "groupstore-peer", ["--group", group, "--member", "observer", "--observe-only", setup, "--log-level", "info"],
            name: "observer \(setup)")
        try child.waitForStderr("peer: observer ready")
        return child
    }

    /// CDShare-style code whose store nothing starts: its `.main` observer
    /// would get nothing; the log says so within seconds.
    func testAStoreNeverStarted_withAMainQueueObserver_saysItDeliversNothing() throws {
        try exec("writer", table)
        let running = try observer("never-started")
        _ = try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', 1)")
        try running.waitForStderr("member 'observer' has not started delivering 3 s after it opened", timeout: 10)
        XCTAssertFalse(running.errors.contains { $0.contains("main observer seq") })
    }

    /// A started store whose `.main` observer cannot run (the main thread
    /// sleeps): the post that waits for it is reported.
    func testAMainQueueObserverWhoseThreadIsBlocked_isReported() throws {
        try exec("writer", table)
        let running = try observer("main-blocked")
        _ = try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', 1)")
        try running.waitForStderr("a .groupStoreDidSave observer has not returned for 3 s", timeout: 15)
        XCTAssertFalse(running.errors.contains { $0.contains("main observer seq") })
    }

    /// A member that only observes, with notifications not counting as
    /// processing: its observer gets the save, and the log says its cursor
    /// stays (the saves come again after a restart).
    func testAMemberThatOnlyObserves_isToldItsCursorDoesNotMove() throws {
        try exec("writer", table)
        let running = try observer("started")
        let seq = try execSeq("writer", "INSERT INTO items(author, n) VALUES ('writer', 1)")
        try running.waitForStderr("peer: main observer seq \(seq)")
        try running.waitForStderr(
            "member 'observer' posts .groupStoreDidSave, but nothing processes the saves (no saves() loop, and notificationsCountAsProcessed is off)",
            timeout: 15)
    }
}
