import Foundation
import Subprocesses

/// Two Unix users of one Unix group share a group directory; a user outside
/// that Unix group can read nothing; a folder a member may not read costs it
/// payloads, not changes.
struct AccessTrial {
    let suite: FaultSuite
    static let unixGroup = "gs-share"
    var tool = ""

    mutating func run() throws -> [Outcome] {
        guard getuid() == 0 else {
            return [
                Outcome(fault: "two Unix users sharing a group", trials: 0, passed: true, figures: "skipped: needs root to create users")
            ]
        }
        try ensureAccounts()
        let parent = suite.newGroup("access")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o1777])
        // A copy of the tool every user may run, wherever this checkout lives.
        let tool = parent + "/groupstore"
        try FileManager.default.copyItem(atPath: suite.path(of: "groupstore"), toPath: tool)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool)
        self.tool = tool
        let group = parent + "/group"
        var outcomes: [Outcome] = []

        // Alice creates the group; Bob, another user of the same Unix group, follows it.
        let create = try runAs(
            "gs-alice",
            ["exec", "--group", group, "--member", "alice", "--sql", "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)"])
        guard create.waitForExit(timeout: 60) == 0 else { throw FaultFailure("alice could not create the group: \(create.errors)") }
        let bob = try runAs("gs-bob", ["watch", "--group", group, "--member", "bob", "--format", "jsonl"])
        guard bob.waitForError(containing: "groupstore: watching", timeout: 30) else {
            throw FaultFailure("bob could not join: \(bob.errors)")
        }
        let write = try runAs("gs-alice", ["exec", "--group", group, "--member", "alice", "--sql", "INSERT INTO t VALUES (2)"])
        guard write.waitForExit(timeout: 60) == 0 else { throw FaultFailure("alice's second write failed: \(write.errors)") }
        let bobSaw = suite.waitForLines(bob, 1, timeout: 30) && bob.output.first?.contains("\"inserted\":[2]") == true
        let bobWrite = try runAs("gs-bob", ["exec", "--group", group, "--member", "bob-tool", "--sql", "INSERT INTO t VALUES (3)"])
        let bobWrote = bobWrite.waitForExit(timeout: 60) == 0
        let worldAccessible = try worldAccessiblePaths(group)
        let foreignGroup = try pathsNotInGroup(group)
        outcomes.append(
            Outcome(
                fault: "two Unix users in one Unix group share a group", trials: 1,
                passed: bobSaw && bobWrote && worldAccessible.isEmpty && foreignGroup.isEmpty,
                figures: "bob saw alice's save: \(bobSaw); bob wrote: \(bobWrote); paths with world access: \(worldAccessible.count); "
                    + "paths not in \(Self.unixGroup): \(foreignGroup.count) (directories 2770, files 0660)"))

        // Eve is not in the Unix group.
        let eveJoin = try runAs("gs-eve", ["watch", "--group", group, "--member", "eve"], unixGroup: nil)
        let eveRefused =
            eveJoin.waitForExit(timeout: 30) == 1 && eveJoin.errors.first?.lowercased().contains("permission denied") == true
        let payload =
            (try? FileManager.default.contentsOfDirectory(atPath: group + "/members/alice"))?.first { $0.hasSuffix(".json") } ?? "lock"
        let cat = try suite.spawn(
            "/usr/sbin/runuser", ["-u", "gs-eve", "--", "/bin/cat", group + "/members/alice/" + payload, group + "/store.sqlite"])
        let eveRead = cat.waitForExit(timeout: 30) == 0
        outcomes.append(
            Outcome(
                fault: "a user outside the Unix group", trials: 1, passed: eveRefused && !eveRead,
                figures: "cannot join (\(eveJoin.errors.first ?? "-")); cannot read payloads or the database: \(!eveRead)"))

        // A member folder Bob may not read: no payloads from it, the changes still arrive.
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: group + "/members/alice")
        let carol = try runAs("gs-bob", ["watch", "--group", group, "--member", "carol", "--format", "jsonl"])
        guard carol.waitForError(containing: "groupstore: watching", timeout: 30) else {
            throw FaultFailure("carol could not join: \(carol.errors)")
        }
        // The store's own service starts watching beside the printing one: wait for its report.
        let denied =
            carol.wait(timeout: 30) { _, errors, _ in
                errors.contains { $0.contains("cannot watch member folder") && $0.contains("permission denied") } ? true : nil
            } ?? false
        try FileManager.default.setAttributes([.posixPermissions: 0o2770], ofItemAtPath: group + "/members/alice")
        let late = try runAs("gs-alice", ["exec", "--group", group, "--member", "alice", "--sql", "INSERT INTO t VALUES (4)"])
        _ = late.waitForExit(timeout: 60)
        let carolSaw = carol.wait(timeout: 30) { lines, _, _ in lines.contains { $0.contains("\"inserted\":[4]") } ? true : nil } ?? false
        outcomes.append(
            Outcome(
                fault: "a member folder that may not be read", trials: 1, passed: denied && carolSaw,
                figures: "logged (\(denied)); the change still arrived from the history: \(carolSaw)"))
        for child in [bob, carol] {
            child.send(SIGTERM)
            _ = child.waitForExit(timeout: 30)
        }
        return outcomes
    }

    private func runAs(_ user: String, _ arguments: [String], unixGroup: String? = AccessTrial.unixGroup) throws -> Subprocess {
        var command = ["-u", user]
        if let unixGroup { command += ["-g", unixGroup] }
        return try suite.spawn("/usr/sbin/runuser", command + ["--", tool] + arguments, name: user)
    }

    private func ensureAccounts() throws {
        func run(_ tool: String, _ arguments: [String]) throws {
            _ = try suite.spawn(tool, arguments).waitForExit(timeout: 60)
        }
        try run("/usr/sbin/groupadd", ["-f", Self.unixGroup])
        for user in ["gs-alice", "gs-bob"] {
            try run("/usr/sbin/useradd", ["-M", "-N", "-g", Self.unixGroup, "-s", "/usr/sbin/nologin", user])
        }
        try run("/usr/sbin/useradd", ["-M", "-N", "-g", "users", "-s", "/usr/sbin/nologin", "gs-eve"])
    }

    private func walk(_ root: String) throws -> [(String, [FileAttributeKey: Any])] {
        var result = [(root, try FileManager.default.attributesOfItem(atPath: root))]
        for entry in try FileManager.default.subpathsOfDirectory(atPath: root) {
            result.append((entry, try FileManager.default.attributesOfItem(atPath: root + "/" + entry)))
        }
        return result
    }

    private func worldAccessiblePaths(_ root: String) throws -> [String] {
        try walk(root).filter { (($0.1[.posixPermissions] as? NSNumber)?.intValue ?? 0) & 0o007 != 0 }.map(\.0)
    }

    private func pathsNotInGroup(_ root: String) throws -> [String] {
        try walk(root).filter { ($0.1[.groupOwnerAccountName] as? String) != Self.unixGroup }.map(\.0)
    }
}
