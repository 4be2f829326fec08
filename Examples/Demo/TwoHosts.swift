import Foundation
import Subprocesses

#if canImport(Glibc)
    import Glibc
#endif

/// Part 3 of the demo: two groups ("hosts" A and B) keep a table in sync
/// through one embedded remote, with `groupstore cloud run`; then both
/// bridges stop, each host edits the same note, and `groupstore cloud sync`
/// settles the conflict (server wins: the edit uploaded first stays).
struct TwoHosts {
    let hostA: String
    let hostB: String
    let remote: String
    /// Every process started, for the demo to stop at the end.
    private(set) var children: [Subprocess] = []

    init(directory: String) {
        hostA = directory + "/hostA"
        hostB = directory + "/hostB"
        remote = directory + "/cloud.sqlite"
    }

    /// Runs the part; returns what it showed, for the summary line.
    mutating func run() throws -> String {
        let hosts = [("A", hostA), ("B", hostB)]
        for (_, directory) in hosts {
            try groupstore([
                "exec", "--group", directory, "--member", "setup", "--sql", "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT, body TEXT)",
            ])
        }
        // A viewer in each group shows what reaches it: the bridge applies remote changes as saves of `cloud`.
        var viewers: [String: Subprocess] = [:]
        for (name, directory) in hosts {
            let viewer = try start(["watch", "--group", directory, "--member", "viewer", "--format", "jsonl"], label: "viewer \(name)")
            guard viewer.waitForError(containing: "groupstore: watching", timeout: 20) else {
                throw DemoFailure("the viewer of host \(name) did not start: \(viewer.errors.suffix(3).joined(separator: "; "))")
            }
            viewers[name] = viewer
        }
        var bridges: [String: Subprocess] = [:]
        for (name, directory) in hosts {
            let bridge = try start(
                ["cloud", "run", "--group", directory, "--remote", remote, "--tables", "note", "--format", "jsonl"], label: "bridge \(name)"
            )
            bridges[name] = bridge
        }
        for (name, _) in hosts {
            let bridge = bridges[name]!
            guard bridge.waitForError(containing: "groupstore: syncing", timeout: 20) else {
                throw DemoFailure("the bridge of host \(name) did not start syncing: \(bridge.errors.suffix(3).joined(separator: "; "))")
            }
            say("[\(name)] groupstore cloud run: syncing host \(name) with cloud.sqlite")
        }

        // Edits flow both ways.
        let aToB = try insertAndWait(
            id: "n1", title: "Groceries", body: "milk, eggs", on: ("A", hostA), seenBy: ("B", hostB), viewer: viewers["B"]!)
        let bToA = try insertAndWait(
            id: "n2", title: "Call Alice", body: "about the trip", on: ("B", hostB), seenBy: ("A", hostA), viewer: viewers["A"]!)

        // A conflict: both hosts edit n1 while their bridges are stopped.
        say("Both bridges stop (SIGTERM); offline, each host gives note n1 another title:")
        for (name, _) in hosts {
            let bridge = bridges[name]!
            bridge.send(SIGTERM)
            guard bridge.waitForExit(timeout: 10) == 0 else {
                throw DemoFailure(
                    "the bridge of host \(name) did not stop cleanly on SIGTERM: \(bridge.errors.suffix(3).joined(separator: "; "))")
            }
        }
        let titles = [("A", hostA, "Groceries for Sunday"), ("B", hostB, "Groceries and wine")]
        for (name, directory, title) in titles {
            try groupstore([
                "exec", "--group", directory, "--member", "editor", "--sql", "UPDATE note SET title = '\(title)' WHERE id = 'n1'",
            ])
            say("[\(name)] UPDATE note SET title = '\(title)' WHERE id = 'n1'")
        }
        say("Then `groupstore cloud sync` once for A, once for B, once more for A (policy server-wins):")
        var conflictLine = ""
        for (name, directory) in [("A", hostA), ("B", hostB), ("A", hostA)] {
            let line = try groupstore(["cloud", "sync", "--group", directory, "--remote", remote, "--tables", "note"]).joined(
                separator: " ")
            // "synced DIR with REMOTE: uploaded …": the counts are the news.
            let counts = line.range(of: ": ").map { String(line[$0.upperBound...]) } ?? line
            say("[\(name)] cloud sync: \(counts)")
            if counts.contains("conflict note/n1") { conflictLine = counts }
        }
        guard !conflictLine.isEmpty else { throw DemoFailure("no sync reported the conflict on note n1") }
        let rowA = try row("n1", in: hostA)
        let rowB = try row("n1", in: hostB)
        say("[A] n1: \(rowA)")
        say("[B] n1: \(rowB)")
        guard rowA == rowB else { throw DemoFailure("the hosts disagree on note n1 after syncing: A has \(rowA), B has \(rowB)") }
        guard rowA.contains("Groceries for Sunday") else {
            throw DemoFailure("server-wins should keep A's title (uploaded first), but both hosts have \(rowA)")
        }
        say("The hosts agree: server-wins kept A's title, which reached the remote first; B's edit lost the conflict.")
        for viewer in viewers.values { viewer.send(SIGTERM) }
        return String(
            format: "2 notes synced both ways through one remote (A→B %.2f s, B→A %.2f s), 1 conflict settled (server-wins)", aToB, bToA)
    }

    /// Inserts a note on one host and waits until the other host's viewer
    /// sees it arrive as a save of `cloud`; returns how long that took.
    private mutating func insertAndWait(
        id: String, title: String, body: String, on source: (String, String), seenBy target: (String, String), viewer: Subprocess
    ) throws -> TimeInterval {
        let started = Date()
        try groupstore([
            "exec", "--group", source.1, "--member", "editor", "--sql", "INSERT INTO note VALUES ('\(id)', '\(title)', '\(body)')",
        ])
        say("[\(source.0)] INSERT INTO note VALUES ('\(id)', '\(title)', '\(body)')")
        let timeout: TimeInterval = 15
        let arrived = viewer.wait(timeout: timeout) { output, _, _ in output.contains { Self.isCloudSave($0, inserting: id) } ? true : nil }
        guard arrived == true else {
            throw DemoFailure(
                "note \(id) inserted on host \(source.0) did not reach host \(target.0) within \(Int(timeout)) s "
                    + "(its viewer saw \(viewer.output.count) saves, none by cloud inserting \(id))")
        }
        let elapsed = Date().timeIntervalSince(started)
        let seconds = String(format: "%.2f", elapsed)
        say("[\(target.0)] note \(id) arrived from \(source.0) as a save of `cloud` in \(seconds) s: \(try row(id, in: target.1))")
        return elapsed
    }

    /// Whether a `watch --format jsonl` line is a save by `cloud` inserting note `id`.
    static func isCloudSave(_ line: String, inserting id: String) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["author"] as? String == "cloud",
            let changes = object["changes"] as? [[String: Any]]
        else { return false }
        return changes.contains { change in
            change["entity"] as? String == "note" && (change["inserted"] as? [Any] ?? []).contains { $0 as? String == id }
        }
    }

    /// A note's row as `title | body`, read with `groupstore exec`.
    private mutating func row(_ id: String, in directory: String) throws -> String {
        let lines = try groupstore([
            "exec", "--group", directory, "--member", "reader", "--sql", "SELECT title, body FROM note WHERE id = '\(id)'",
        ])
        guard let line = lines.first else { throw DemoFailure("note \(id) is missing in \(directory)") }
        return line.replacingOccurrences(of: "\t", with: " | ")
    }

    /// Runs `groupstore` to its end; its output lines but exec's last one
    /// ("seq N" or "no tracked changes").
    @discardableResult
    private mutating func groupstore(_ arguments: [String]) throws -> [String] {
        let child = try start(arguments, label: "groupstore \(arguments[0])")
        guard let status = child.waitForExit(timeout: 30) else {
            throw DemoFailure("groupstore \(arguments.prefix(2).joined(separator: " ")) did not finish within 30 s")
        }
        guard status == 0 else {
            throw DemoFailure(
                "groupstore \(arguments.prefix(2).joined(separator: " ")) failed: \(child.errors.suffix(3).joined(separator: "; "))")
        }
        var lines = child.output
        if arguments.first == "exec", let last = lines.last, last.hasPrefix("seq ") || last == "no tracked changes" { lines.removeLast() }
        return lines
    }

    private mutating func start(_ arguments: [String], label: String) throws -> Subprocess {
        let child = try Demo.start("groupstore", arguments, label: label, echo: false)
        children.append(child)
        return child
    }
}
