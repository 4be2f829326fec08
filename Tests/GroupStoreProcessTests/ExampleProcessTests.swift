import Foundation
import GRDB
import XCTest

/// The example daemons and the demo, run as the README runs them.
final class ExampleProcessTests: ProcessTestCase {
    func testCounterPair_eachSeesEveryIncrementOfTheOther() throws {
        let increments = 6
        let counters = try ["app", "extension"].map { member in
            try spawn(
                "counter", ["--group", group, "--member", member, "--increments", "\(increments)", "--interval-ms", "20", "--wait-for-go"],
                name: member)
        }
        for counter in counters { try counter.waitForStderr("ready") }
        for counter in counters { counter.writeLine("go") }
        for counter in counters { XCTAssertEqual(try counter.waitForExit(timeout: 60), 0, "\(counter.name): \(counter.errors)") }
        for (me, other) in [("app", "extension"), ("extension", "app")] {
            let output = counters.first { $0.name == me }!.output
            XCTAssertEqual(output.filter { $0.hasPrefix("\(me) saw \(other) increment it") }.count, increments, "\(me): \(output)")
            XCTAssertEqual(output.filter { $0.hasPrefix("\(me) incremented the counter") }.count, increments)
        }
        XCTAssertEqual(try read { try Int.fetchOne($0, sql: "SELECT value FROM counter") }, 2 * increments)
    }

    func testJobPair_producesNJobs_completedOnceEach_andTheWorkerStopsCleanly() throws {
        let jobs = 25
        let worker = try spawn("job-worker", ["--group", group, "--member", "worker"], name: "worker")
        try worker.waitForStderr("worker started")
        let producer = try spawn("job-producer", ["--group", group, "--jobs", "\(jobs)", "--interval-ms", "10"], name: "producer")
        XCTAssertEqual(try producer.waitForExit(timeout: 60), 0, "producer: \(producer.errors.suffix(5))")
        XCTAssertEqual(producer.output.last, "producer: \(jobs) jobs done")
        XCTAssertEqual(producer.output.filter { $0.hasPrefix("producer enqueued job") }.count, jobs)

        worker.send(SIGTERM)
        XCTAssertEqual(try worker.waitForExit(), 0)
        XCTAssertTrue(worker.errors.contains { $0.contains("worker stopped cleanly") }, "\(worker.errors.suffix(5))")
        let completed = worker.output.filter { $0.hasPrefix("worker completed job") }
        XCTAssertEqual(completed.count, jobs)
        XCTAssertEqual(Set(completed).count, jobs, "a job was completed twice")
        let states = try read { try Row.fetchAll($0, sql: "SELECT state, worker, result, payload FROM job") }
        XCTAssertEqual(states.count, jobs)
        for row in states {
            XCTAssertEqual(row["state"], "done")
            XCTAssertEqual(row["worker"], "worker")
            XCTAssertEqual(row["result"] as String, String((row["payload"] as String).reversed()))
        }
    }

    func testWorkerStoppedBySIGTERMMidStream_leavesNoHalfDoneJob() throws {
        let worker = try spawn("job-worker", ["--group", group, "--member", "worker", "--work-ms", "15"], name: "worker")
        try worker.waitForStderr("worker started")
        let producer = try spawn("job-producer", ["--group", group, "--jobs", "0", "--interval-ms", "3"], name: "producer")
        try worker.waitForLines(5)
        worker.send(SIGTERM)
        XCTAssertEqual(try worker.waitForExit(), 0, "\(worker.errors.suffix(5))")
        producer.send(SIGTERM)
        XCTAssertEqual(try producer.waitForExit(), 0, "\(producer.errors.suffix(5))")

        let claimed = try read { try Int.fetchOne($0, sql: "SELECT count(*) FROM job WHERE state = 'claimed'") }
        XCTAssertEqual(claimed, 0, "the worker left a job half done")
        let done = try read { try Int.fetchOne($0, sql: "SELECT count(*) FROM job WHERE state = 'done'") } ?? 0
        XCTAssertEqual(done, worker.output.filter { $0.hasPrefix("worker completed job") }.count)
        XCTAssertGreaterThanOrEqual(done, 5)
    }

    func testDemo_runsBothPairs_saysHowToRunTheTwoHosts_andEndsWithASummary() throws {
        let demo = try spawn("groupstore-demo", [], name: "demo")
        XCTAssertEqual(try demo.waitForExit(timeout: 120), 0, "demo: \(demo.output.suffix(5))")
        let summary = try XCTUnwrap(demo.output.last)
        XCTAssertTrue(summary.hasPrefix("Summary: 28 saves delivered between processes"), summary)
        XCTAssertFalse(summary.contains("two hosts"), summary)
        XCTAssertTrue(demo.output.contains("[worker] stopped cleanly on SIGTERM"))
        XCTAssertTrue(
            demo.output.contains(
                "3. Two hosts syncing through a remote (the cloud bridge, about a minute more to build): swift run groupstore-demo --two-hosts"
            ),
            "the debug build's command: \(demo.output.suffix(4))")
        XCTAssertFalse(demo.output.contains { $0.hasPrefix("[A]") || $0.hasPrefix("[B]") }, "no host ran")
    }

    func testDemoWithTwoHosts_syncsThemThroughTheRemote_andSettlesTheConflict() throws {
        let demo = try spawn("groupstore-demo", ["--two-hosts"], name: "demo")
        XCTAssertEqual(try demo.waitForExit(timeout: 180), 0, "demo: \(demo.output.suffix(5))")
        let summary = try XCTUnwrap(demo.output.last)
        XCTAssertTrue(summary.hasPrefix("Summary: 28 saves delivered between processes"), summary)
        XCTAssertTrue(summary.contains("; two hosts: "), summary)
        XCTAssertTrue(demo.output.contains { $0.hasPrefix("[B] note n1 arrived from A as a save of `cloud`") }, "\(demo.output)")
        XCTAssertTrue(demo.output.contains { $0.hasPrefix("[A] note n2 arrived from B as a save of `cloud`") }, "\(demo.output)")
    }

    func testDemo_refusesAnArgumentItDoesNotTake_andRunsNothing() throws {
        let demo = try spawn("groupstore-demo", ["--two-host"], name: "demo")
        XCTAssertEqual(try demo.waitForExit(timeout: 60), 2)
        XCTAssertEqual(demo.output, [])
        XCTAssertEqual(demo.errors, ["groupstore-demo: unknown argument --two-host (it takes --two-hosts and --keep)"])
    }

    /// The README's first command builds the demo alone; the demo builds
    /// what it runs from the package's directory. Run from anywhere else
    /// without them, it runs nothing and says what to run instead.
    func testDemoWithoutWhatItRuns_outsideThePackage_saysWhatToRun_andRunsNothing() throws {
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: true)
        let demo = group + "/groupstore-demo"
        try FileManager.default.copyItem(
            atPath: ChildProcess.productsDirectory.appendingPathComponent("groupstore-demo").path, toPath: demo)
        let child = try spawn("/bin/sh", ["-c", "cd \"$0\" && exec \"$0/groupstore-demo\"", group], name: "demo")
        XCTAssertEqual(try child.waitForExit(timeout: 60), 1, "\(child.output) \(child.errors)")
        XCTAssertEqual(child.output, [], "nothing run")
        XCTAssertEqual(
            child.errors,
            [
                "groupstore-demo: it runs counter, job-worker and job-producer, not built next to it in \(group); "
                    + "run it from the package's directory, where it builds them: swift run -c release groupstore-demo"
            ])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: group), ["groupstore-demo"], "no group made")
    }
}
