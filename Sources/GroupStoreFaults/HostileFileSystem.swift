import Foundation
import Subprocesses

/// The group's files changed under running members by someone else.
struct HostileFileSystem {
    let suite: FaultSuite

    func run() throws -> [Outcome] {
        [
            attempt("a payload that is a symbolic link to a file outside the group", symlinkedPayload),
            attempt("a member's folder replaced by a symbolic link while it runs", folderReplacedBySymlink),
            attempt("a member's folder deleted while it runs", folderDeleted),
            attempt("the whole group directory removed and re-created", groupRemoved),
            attempt("the database file replaced under running members", databaseReplaced),
            attempt("disk full where payloads are written", diskFull),
        ]
    }

    private func attempt(_ fault: String, _ body: () throws -> String) -> Outcome {
        do {
            return Outcome(fault: fault, trials: 1, passed: true, figures: try body())
        } catch {
            return Outcome(fault: fault, trials: 1, passed: false, figures: "\(error)")
        }
    }

    /// A watcher and a writer writing `writes` rows slowly.
    private func running(_ name: String, writes: Int) throws -> (group: String, watcher: Subprocess, writer: Subprocess) {
        let group = suite.newGroup(name)
        let watcher = try suite.watch(group, "watcher")
        let writer = try suite.peer(group, "writer", writes: writes, intervalUs: 2_000)
        guard suite.waitForLines(watcher, 10, timeout: 30) else { throw FaultFailure("no saves before the fault") }
        return (group, watcher, writer)
    }

    /// Every committed row reached the watcher once.
    private func everythingDelivered(_ group: String, _ watcher: Subprocess) throws -> Int {
        let committed = try suite.committedItems(group).map(\.0)
        // Counted in keys (a save may only announce the table's creation).
        let caughtUp = watcher.wait(timeout: 60) { lines, _, _ in
            FaultSuite.saves(lines).reduce(0) { $0 + $1.keys.count } >= committed.count ? true : nil
        }
        guard caughtUp != nil else {
            throw FaultFailure("delivered \(watcher.output.count) saves for \(committed.count) rows")
        }
        let keys = FaultSuite.saves(watcher.output).flatMap(\.keys)
        guard keys == committed else { throw FaultFailure("delivered keys differ from the committed rows") }
        return committed.count
    }

    private func outsideDirectory() throws -> String {
        let path = suite.newGroup("outside")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func symlinkedPayload() throws -> String {
        let (group, watcher, writer) = try running("symlink-payload", writes: 200)
        let outside = try outsideDirectory() + "/secret"
        try "secret\n".write(toFile: outside, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: group + "/tmp/link", withDestinationPath: outside)
        guard rename(group + "/tmp/link", group + "/members/writer/00001000000000000000.v2.json") == 0 else {
            throw FaultFailure("cannot plant the link: errno \(errno)")
        }
        _ = writer.waitForExit(timeout: 60)
        let count = try everythingDelivered(group, watcher)
        guard try String(contentsOfFile: outside, encoding: .utf8) == "secret\n" else { throw FaultFailure("the outside file changed") }
        // Members never open payload files (a name is a wake-up), so the link
        // is never followed, and a seq beyond the history is not delivered.
        guard !FaultSuite.saves(watcher.output).contains(where: { $0.seq == 1_000_000_000_000_000 }) else {
            throw FaultFailure("a save was delivered for the planted name")
        }
        return "not followed (payloads are never opened); the outside file untouched; \(count) transactions delivered"
    }

    private func folderReplacedBySymlink() throws -> String {
        let (group, watcher, writer) = try running("folder-symlink", writes: 300)
        let outside = try outsideDirectory()
        try FileManager.default.createSymbolicLink(atPath: group + "/tmp/link", withDestinationPath: outside)
        // Two renames back to back; the member may re-create its folder in between.
        rename(group + "/members/writer", suite.newGroup("moved-away"))
        let planted = rename(group + "/tmp/link", group + "/members/writer") == 0
        let reaction = planted ? "cannot be re-created" : "re-created it"
        guard writer.waitForError(containing: reaction, timeout: 30) else {
            throw FaultFailure("the writer did not react to its folder (\(reaction)): \(writer.errors.suffix(3))")
        }
        guard writer.waitForExit(timeout: 60) == 0 else { throw FaultFailure("the writer failed: \(writer.errors.suffix(3))") }
        let count = try everythingDelivered(group, watcher)
        let written = try FileManager.default.contentsOfDirectory(atPath: outside)
        guard written.isEmpty else { throw FaultFailure("files were written through the link: \(written.prefix(3))") }
        return planted
            ? "reported, not followed (nothing written outside); payloads stopped, \(count) transactions still delivered from the history"
            : "the member re-created its folder before the link could be planted; \(count) transactions delivered"
    }

    private func folderDeleted() throws -> String {
        let (group, watcher, writer) = try running("folder-deleted", writes: 300)
        let away = suite.newGroup("deleted")
        rename(group + "/members/writer", away)
        // The writer may still add a file to the folder it holds open while the
        // removal runs (seen once in CI: EPERM from the recursive delete): try again.
        var removal = 0
        while true {
            do {
                try FileManager.default.removeItem(atPath: away)
                break
            } catch  where removal < 20 {
                removal += 1
                usleep(50_000)
            }
        }
        guard writer.waitForError(containing: "re-created it", timeout: 30) else {
            throw FaultFailure("the writer did not re-create its folder: \(writer.errors.suffix(3))")
        }
        let (status, errors) = try suite.exec(group, "writer", "SELECT 1")
        guard status != 0, errors.first?.contains("already live") == true else {
            throw FaultFailure("the name could be claimed while its member runs: \(errors)")
        }
        guard writer.waitForExit(timeout: 60) == 0 else { throw FaultFailure("the writer failed") }
        let count = try everythingDelivered(group, watcher)
        return "folder and lock re-created at once (the name stayed taken); \(count) transactions delivered"
    }

    private func groupRemoved() throws -> String {
        let (group, watcher, writer) = try running("group-removed", writes: 100_000)
        // Moved away in one step, then deleted: members still write into it
        // meanwhile, which a recursive delete in place would race with.
        let away = suite.newGroup("removed")
        guard rename(group, away) == 0 else { throw FaultFailure("cannot move the group away") }
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: false)
        try expectRefusal(writer: writer, watcher: watcher)
        // The re-created directory is a new group that works.
        let fresh = try suite.watch(group, "fresh")
        let (status, _) = try suite.exec(group, "tool", "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)")
        guard status == 0, suite.waitForLines(fresh, 1, timeout: 30) else { throw FaultFailure("the re-created group does not work") }
        fresh.send(SIGTERM)
        _ = fresh.waitForExit(timeout: 30)
        return
            "running members refuse further writes (GroupStoreError.groupReplaced) and end their streams with a one-line error; the re-created directory works as a new group"
    }

    /// The writer refuses further writes and the watcher stops, both saying
    /// to reopen the store.
    private func expectRefusal(writer: Subprocess, watcher: Subprocess) throws {
        guard writer.waitForError(containing: "reopen the store", timeout: 30) else {
            throw FaultFailure("the writer did not refuse writes: \(writer.errors.suffix(3))")
        }
        guard watcher.waitForExit(timeout: 30) == 1, watcher.errors.last?.contains("reopen the store") == true else {
            throw FaultFailure("the watcher did not stop with a clear error: \(watcher.errors.suffix(2))")
        }
        writer.send(SIGTERM)
        _ = writer.waitForExit(timeout: 30)
    }

    private func databaseReplaced() throws -> String {
        let (group, watcher, writer) = try running("database-replaced", writes: 100_000)
        let database = group + "/store.sqlite"
        try FileManager.default.copyItem(atPath: database, toPath: group + "/copy.sqlite")
        rename(group + "/copy.sqlite", database)
        try expectRefusal(writer: writer, watcher: watcher)
        return "running members notice the new inode, refuse further writes (they would go to the old file) and stop with a one-line error"
    }

    private func diskFull() throws -> String {
        let group = suite.newGroup("disk-full")
        let watcher = try suite.watch(group, "watcher")
        let staging = group + "/tmp"
        let mount = try suite.spawn("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=8k,mode=2770", "tmpfs", staging])
        guard mount.waitForExit(timeout: 30) == 0 else {
            watcher.send(SIGTERM)
            return "skipped: mounting a small tmpfs needs root (\(mount.errors.first ?? ""))"
        }
        defer { _ = try? suite.spawn("/usr/bin/umount", ["-l", staging]).waitForExit(timeout: 30) }
        // Fill it: write until the file system says no.
        let filler = open(staging + "/filler", O_WRONLY | O_CREAT, 0o600)
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        close(filler)
        let writer = try suite.peer(group, "writer", writes: 200, intervalUs: 1_000)
        guard writer.waitForExit(timeout: 60) == 0 else { throw FaultFailure("the writer failed: \(writer.errors.suffix(3))") }
        let notPublished = writer.errors.filter { $0.contains("payload not published") }.count
        guard notPublished > 0 else { throw FaultFailure("no publishing failure was logged: \(writer.errors.suffix(3))") }
        let count = try everythingDelivered(group, watcher)
        watcher.send(SIGTERM)
        _ = watcher.waitForExit(timeout: 30)
        return "\(notPublished) payloads not published (logged, disk full); all \(count) transactions delivered from the history"
    }
}
