import Foundation
import Subprocesses

#if canImport(Glibc)
    import Glibc
#endif

/// `groupstore-demo`: two pairs of processes sharing one SQLite database on a
/// fresh temporary group, their saves flowing both ways, then a summary.
///
/// 1. The CDShare example: `counter` as "app" and as "extension".
/// 2. A job queue: `job-producer` enqueues, `job-worker` claims and completes,
///    each reacting to the other's saves; the worker is stopped with SIGTERM.
/// 3. With `--two-hosts`: two groups, each with its own `store.sqlite`, keep
///    a table in sync through one embedded remote with `groupstore cloud run`;
///    then a conflict made while the bridges are stopped, settled by `cloud
///    sync`. It runs the `groupstore` tool, whose cloud bridge takes about a
///    minute more to build: the README's first command leaves it out, so that
///    a newcomer waits less than three minutes (``TwoHosts``).
@main
struct Demo {
    /// The sibling executables parts 1 and 2 run.
    static let siblings = ["counter", "job-worker", "job-producer"]
    /// What part 3 runs besides.
    static let twoHostsSiblings = ["groupstore"]

    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        if let unknown = arguments.first(where: { !["--two-hosts", "--keep"].contains($0) }) {
            FileHandle.standardError.write(Data("groupstore-demo: unknown argument \(unknown) (it takes --two-hosts and --keep)\n".utf8))
            exit(2)
        }
        let twoHosts = arguments.contains("--two-hosts")
        Prerequisites.ensureBuilt(siblings + (twoHosts ? twoHostsSiblings : []), advice: twoHosts ? ["--two-hosts"] : [])
        let group = makeGroupDirectory()
        let temporary = (group as NSString).deletingLastPathComponent
        let keep = arguments.contains("--keep")
        let started = Date()
        say("GroupStore demo: processes sharing \(group)/store.sqlite and seeing each other's saves live.\n")
        var ok = true
        var children: [Subprocess] = []
        var hosts = TwoHosts(directory: temporary)
        defer {
            for child in children + hosts.children { child.stop() }
            if !keep { try? FileManager.default.removeItem(atPath: temporary) }
        }
        do {
            // 1. Counter pair.
            say("1. The CDShare counter: an app and its extension increment one shared counter.")
            let counters = try ["app", "extension"].map { member in
                try start(
                    "counter", ["--group", group, "--member", member, "--increments", "8", "--interval-ms", "120", "--wait-for-go"],
                    label: member)
            }
            children += counters
            for counter in counters where !counter.waitForError(containing: "ready", timeout: 20) {
                throw DemoFailure("\(counter.name) did not start: \(counter.errors.joined(separator: "; "))")
            }
            for counter in counters { counter.writeLine("go") }
            for counter in counters {
                guard let status = counter.waitForExit(timeout: 30), status == 0 else {
                    throw DemoFailure("\(counter.name) failed: \(counter.errors.suffix(3).joined(separator: "; "))")
                }
            }

            // 2. Job pair.
            say("\n2. A job queue: a producer daemon enqueues, a worker daemon claims and completes, no polling.")
            let worker = try start("job-worker", ["--group", group, "--member", "worker"], label: "worker")
            children.append(worker)
            guard worker.waitForError(containing: "worker started", timeout: 20) else { throw DemoFailure("the worker did not start") }
            let producer = try start(
                "job-producer", ["--group", group, "--member", "producer", "--jobs", "12", "--interval-ms", "80"],
                label: "producer")
            children.append(producer)
            guard let status = producer.waitForExit(timeout: 30), status == 0 else {
                throw DemoFailure("the producer failed: \(producer.errors.suffix(3).joined(separator: "; "))")
            }
            worker.send(SIGTERM)
            guard worker.waitForExit(timeout: 10) == 0, worker.errors.contains(where: { $0.contains("worker stopped cleanly") }) else {
                throw DemoFailure("the worker did not stop cleanly on SIGTERM")
            }
            say("[worker] stopped cleanly on SIGTERM")

            let delays = children.flatMap(\.output).compactMap(delay(in:)).sorted()
            guard !delays.isEmpty else { throw DemoFailure("no save was delivered") }

            // 3. Two hosts.
            var hostsReport = ""
            if twoHosts {
                say("\n3. Two hosts: groups A and B, each with its own store.sqlite, sync table `note` through one remote, cloud.sqlite.")
                hostsReport = "; two hosts: " + (try hosts.run())
            } else {
                say(
                    "\n3. Two hosts syncing through a remote (the cloud bridge, about a minute more to build): "
                        + Prerequisites.command(["--two-hosts"]))
            }

            // Summary.
            say(
                String(
                    format: "\nSummary: %d saves delivered between processes; delay from commit to delivery median %.2f ms, p99 %.2f ms",
                    delays.count, percentile(delays, 0.5), percentile(delays, 0.99))
                    + hostsReport + String(format: " (%.1f s in all).", Date().timeIntervalSince(started)))
        } catch {
            say("demo failed: \(error)")
            ok = false
        }
        exit(ok ? 0 : 1)
    }

    /// Starts a sibling example executable; its stdout is echoed with a label
    /// unless `echo` is false.
    static func start(_ executable: String, _ arguments: [String], label: String, echo: Bool = true) throws -> Subprocess {
        try Subprocess(Subprocess.productsDirectory.appendingPathComponent(executable), arguments, name: label) { stream, line in
            if echo && stream == .output { say("[\(label)] \(line)") }
        }
    }

    static func makeGroupDirectory() -> String {
        // NSTemporaryDirectory() ends with a slash ("/tmp/"): one slash in the path, not two.
        let temporary = NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
        var template = Array((temporary + "/groupstore-demo-XXXXXX").utf8CString)
        guard let path = mkdtemp(&template) else { fatalError("cannot create a temporary directory") }
        return String(cString: path) + "/group"
    }

    /// The delay in "… after 0.412 ms" lines.
    static func delay(in line: String) -> Double? {
        guard let range = line.range(of: " after "), line.hasSuffix(" ms") else { return nil }
        return Double(line[range.upperBound...].dropLast(3))
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))]
    }
}

/// Prints one line at once (the transcript interleaves several processes).
@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct DemoFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
