import Foundation
import GRDB
import GroupStore
import Subprocesses

/// Three groups edit the same two tables at once — random inserts, updates
/// and deletes over a small shared key space, so the same records are edited
/// in several groups at once (conflicts), and parents are deleted under
/// children (ON DELETE CASCADE); in every group an app trigger derives a
/// column (`name_length`) from another, so applying a remote change makes a
/// change of its own — while each runs `groupstore cloud run`
/// against one embedded remote. Then writing stops, the bridges settle
/// (bounded: every group's status shows nothing pending and two consecutive
/// dumps of the three groups agree), and the three dumps must be identical,
/// equal to the remote's live records, with no record parked and no foreign
/// key broken.
struct CloudConvergenceTrial {
    let suite: FaultSuite
    var harness: CloudHarness { CloudHarness(suite: suite) }

    static let settleBound: TimeInterval = 120
    static let parentKeys = (0..<15).map { String(format: "p%02d", $0) }
    static let childKeys = (0..<45).map { String(format: "c%02d", $0) }
    static let parentColumns = ["name", "n", "name_length"]
    static let childColumns = ["parent_id", "v", "note"]

    func run(seconds: Int, policy: String, seed: UInt64) throws -> [Outcome] {
        let folder = try suite.newFolder("cloud-converge-\(policy)")
        let outcomes: [Outcome]
        do {
            outcomes = try run(in: folder, seconds: seconds, policy: policy, seed: seed)
        } catch {
            let kept = suite.finish(folder: folder, failed: true)
            throw FaultFailure("\(error) [groups and remote kept in \(kept ?? folder)]")
        }
        let kept = suite.finish(folder: folder, failed: outcomes.contains { !$0.passed })
        return outcomes.map { outcome in
            var outcome = outcome
            if let kept { outcome.figures += " [groups and remote kept in \(kept)]" }
            return outcome
        }
    }

    private func run(in folder: String, seconds: Int, policy: String, seed: UInt64) throws -> [Outcome] {
        let remote = folder + "/cloud.sqlite"
        let names = ["G1", "G2", "G3"]
        let groups = names.map { folder + "/" + $0 }
        var stores: [GroupStore] = []
        defer { for store in stores { store.closeBlocking() } }
        for group in groups {
            let store = try GroupStore(.cloudTrialWriter(group))
            stores.append(store)
            try store.writeBlocking { db in
                try db.execute(
                    sql: """
                        CREATE TABLE parent(id TEXT PRIMARY KEY, name TEXT, n INTEGER, name_length INTEGER);
                        CREATE TRIGGER parent_name_length_insert AFTER INSERT ON parent
                          BEGIN UPDATE parent SET name_length = length(NEW.name) WHERE id = NEW.id; END;
                        CREATE TRIGGER parent_name_length_update AFTER UPDATE OF name ON parent
                          BEGIN UPDATE parent SET name_length = length(NEW.name) WHERE id = NEW.id; END;
                        CREATE TABLE child(id TEXT PRIMARY KEY, parent_id TEXT NOT NULL REFERENCES parent(id) ON DELETE CASCADE,
                                           v INTEGER, note TEXT);
                        CREATE INDEX child_parent ON child(parent_id);
                        """)
            }
        }
        var bridges: [Subprocess] = []
        defer {
            for bridge in bridges { bridge.stop() }
            CloudHarness.saveOutput(bridges, in: folder)
        }
        for (name, group) in zip(names, groups) {
            let bridge = try harness.bridge(group, remote: remote, tables: ["parent", "child"], policy: policy, name: "cloud run \(name)")
            bridges.append(bridge)
            guard CloudHarness.waitSyncing(bridge, timeout: 30) else {
                throw FaultFailure("\(name)'s bridge did not start: \(CloudHarness.tail(bridge))")
            }
        }

        // Three writers at once, each on a thread of its own, for `seconds`.
        let stop = StopFlag()
        let writers = stores.enumerated().map { index, store in
            RandomTreeWriter(store: store, seed: seed &+ UInt64(index) &* 0x9E37_79B9)
        }
        let threads = writers.map { writer in
            let thread = Thread { writer.run(until: stop) }
            thread.start()
            return thread
        }
        _ = threads
        let end = Date(timeIntervalSinceNow: TimeInterval(seconds))
        var bridgeDied: String?
        while Date() < end {
            usleep(200_000)  // checks that every bridge still runs (no synchronisation)
            if let dead = bridges.first(where: { $0.status != nil }) {
                bridgeDied = "\(dead.name) exited with \(dead.status ?? -1) while the groups wrote: \(CloudHarness.tail(dead))"
                break
            }
        }
        stop.set()
        for writer in writers { writer.finished.wait() }
        if let bridgeDied { throw FaultFailure(bridgeDied) }
        let failures = writers.compactMap(\.failure)
        guard failures.isEmpty else { throw FaultFailure("a writer failed: \(failures)") }

        // Settle: nothing pending anywhere, the three dumps equal, twice in a row.
        let settleStart = Date()
        var previous: [String]?
        var dumps: [String] = []
        var statuses: [CloudStatusReport] = []
        while true {
            statuses = try groups.map { try harness.status($0) }
            dumps = try groups.map { try Self.dump($0) }
            let agree = Set(dumps).count == 1
            if statuses.allSatisfy({ $0.pending == 0 }) && agree && previous == dumps { break }
            previous = dumps
            if Date().timeIntervalSince(settleStart) > Self.settleBound {
                throw FaultFailure(
                    String(format: "not settled after %.0f s: ", Self.settleBound)
                        + zip(names, statuses).map {
                            "\($0) pending \($1.pending) parked \($1.parked) \($1.parkedRecords.prefix(3)) error \($1.lastError ?? "none")"
                        }.joined(separator: "; ")
                        + "; " + Self.differences(names, groups))
            }
            usleep(500_000)  // consecutive dumps half a second apart
        }
        let settled = Date().timeIntervalSince(settleStart)

        // The remote's live records are the same rows.
        var problems: [String] = []
        let parents = try CloudHarness.rows(groups[0], "parent", columns: Self.parentColumns)
        let children = try CloudHarness.rows(groups[0], "child", columns: Self.childColumns)
        if try CloudHarness.remoteRecords(remote, type: "parent", columns: Self.parentColumns) != parents {
            problems.append("the remote's live parent records differ from the groups' rows")
        }
        if try CloudHarness.remoteRecords(remote, type: "child", columns: Self.childColumns) != children {
            problems.append("the remote's live child records differ from the groups' rows")
        }
        for (name, status) in zip(names, statuses) where !status.live || status.lastError != nil {
            problems.append("\(name): live \(status.live), last error \(status.lastError ?? "none")")
        }
        // Parked records are allowed (a conflict that did not settle in a few
        // rounds is parked by design) as long as the groups converged; they are reported.
        let parked = zip(names, statuses).flatMap { name, status in status.parkedRecords.map { "\(name) \($0)" } }
        for (name, group) in zip(names, groups) {
            let broken = try CloudHarness.read(group + "/store.sqlite") { try Row.fetchAll($0, sql: "PRAGMA foreign_key_check").count }
            if broken > 0 { problems.append("\(name): \(broken) broken foreign keys") }
            // The derived column an app trigger keeps, in every group: right, and not a loop's.
            let wrong = try CloudHarness.read(group + "/store.sqlite") {
                try Int.fetchOne($0, sql: "SELECT count(*) FROM parent WHERE name_length IS NOT length(name)") ?? 0
            }
            if wrong > 0 { problems.append("\(name): \(wrong) parents whose derived name_length is not length(name)") }
        }
        let unclean = CloudHarness.terminate(bridges)
        if !unclean.isEmpty { problems.append("bridges that did not exit 0 on SIGTERM: \(unclean)") }

        let transactions = writers.reduce(0) { $0 + $1.counts.transactions }
        let operations = writers.reduce(0) { $0 + $1.counts.operations }
        let cascaded = writers.reduce(0) { $0 + $1.counts.cascaded }
        let parentDeletes = writers.reduce(0) { $0 + $1.counts.parentDeletes }
        let conflicts = statuses.reduce(0) { $0 + $1.conflicts }
        let figures = String(
            format:
                "seed %llu; %ld transactions (%ld row operations; %ld parent deletes cascading to %ld children) in 3 groups in %ld s; "
                + "%ld conflicts settled; settled in %.1f s; %ld parents and %ld children, identical in the 3 groups and on the remote; %ld records left parked%@",
            seed, transactions, operations, parentDeletes, cascaded, seconds, conflicts, settled, parents.count, children.count,
            parked.count, parked.isEmpty ? "" : " (" + parked.prefix(4).joined(separator: "; ") + ")")
        return [
            Outcome(
                fault:
                    "cloud: 3 groups editing the same 2 tables (FK, cascade, a derived-column trigger) at once for \(seconds) s, policy \(policy)",
                trials: 1, passed: problems.isEmpty,
                figures: problems.isEmpty ? figures : problems.joined(separator: "; ") + " (\(figures))")
        ]
    }

    /// Both tables, ordered, as text.
    static func dump(_ group: String) throws -> String {
        let parents = try CloudHarness.rows(group, "parent", columns: parentColumns)
        let children = try CloudHarness.rows(group, "child", columns: childColumns)
        return parents.sorted { $0.key < $1.key }.map { "parent \($0.key) \($0.value)" }.joined(separator: "\n") + "\n"
            + children.sorted { $0.key < $1.key }.map { "child \($0.key) \($0.value)" }.joined(separator: "\n")
    }

    /// A few differing rows between the groups, for a failure message.
    static func differences(_ names: [String], _ groups: [String]) -> String {
        var notes: [String] = []
        for (table, columns) in [("parent", parentColumns), ("child", childColumns)] {
            guard let rows = try? groups.map({ try CloudHarness.rows($0, table, columns: columns) }) else { continue }
            let keys = rows.reduce(Set<String>()) { $0.union($1.keys) }.sorted()
            for key in keys where Set(rows.map { $0[key] ?? "absent" }).count > 1 {
                notes.append("\(table) \(key): " + zip(names, rows).map { "\($0) \($1[key] ?? "absent")" }.joined(separator: ", "))
                if notes.count >= 4 { break }
            }
        }
        return notes.isEmpty ? "no row differs" : notes.joined(separator: "; ")
    }
}

/// A flag the main thread sets and the writer threads read.
///
/// `@unchecked Sendable`: `value` is only read and written under `lock`.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// One group's writer in the convergence trial: random transactions of
/// inserts, updates and deletes over parents and children, on its own thread.
///
/// `@unchecked Sendable`: `random`, `counts` and `failure` are written by
/// the writer's thread only, and `counts` and `failure` read after
/// `finished` is signalled.
final class RandomTreeWriter: @unchecked Sendable {
    struct Counts {
        var transactions = 0
        var operations = 0
        var parentDeletes = 0
        var cascaded = 0
    }

    let store: GroupStore
    private var random: SeededGenerator
    private(set) var counts = Counts()
    private(set) var failure: String?
    let finished = DispatchSemaphore(value: 0)

    init(store: GroupStore, seed: UInt64) {
        self.store = store
        random = SeededGenerator(seed: seed)
    }

    func run(until stop: StopFlag) {
        defer { finished.signal() }
        while !stop.isSet {
            do {
                let operations = Int.random(in: 1...4, using: &random)
                var random = self.random
                let (done, cascaded, parentDeletes) = try store.writeBlocking { db -> (Int, Int, Int) in
                    var done = 0
                    var cascaded = 0
                    var parentDeletes = 0
                    for _ in 0..<operations {
                        let result = try Self.operation(db, &random)
                        done += 1
                        cascaded += result.cascaded
                        parentDeletes += result.parentDelete ? 1 : 0
                    }
                    return (done, cascaded, parentDeletes)
                }
                self.random = random
                counts.transactions += 1
                counts.operations += done
                counts.cascaded += cascaded
                counts.parentDeletes += parentDeletes
            } catch {
                failure = "\(error)"
                return
            }
            usleep(UInt32.random(in: 2_000...30_000, using: &random))
        }
    }

    private static func word(_ random: inout SeededGenerator) -> String {
        ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"].randomElement(using: &random)!
            + "-\(Int.random(in: 0...999, using: &random))"
    }

    /// One random row operation; how many children a parent delete cascaded to.
    private static func operation(_ db: Database, _ random: inout SeededGenerator) throws -> (cascaded: Int, parentDelete: Bool) {
        let parents = try String.fetchAll(db, sql: "SELECT id FROM parent ORDER BY id")
        let children = try String.fetchAll(db, sql: "SELECT id FROM child ORDER BY id")
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case _ where roll < 15 || parents.isEmpty:
            // Insert a parent (or, when every key is taken, update one).
            let key = CloudConvergenceTrial.parentKeys.randomElement(using: &random)!
            try db.execute(
                sql: "INSERT INTO parent(id, name, n) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET n = excluded.n",
                arguments: [key, word(&random), Int.random(in: 0...1_000_000, using: &random)])
        case 15..<35:
            // Update one or both fields of a parent.
            let key = parents.randomElement(using: &random)!
            switch Int.random(in: 0..<3, using: &random) {
            case 0: try db.execute(sql: "UPDATE parent SET name = ? WHERE id = ?", arguments: [word(&random), key])
            case 1:
                try db.execute(
                    sql: "UPDATE parent SET n = ? WHERE id = ?", arguments: [Int.random(in: 0...1_000_000, using: &random), key])
            default:
                try db.execute(
                    sql: "UPDATE parent SET name = ?, n = ? WHERE id = ?",
                    arguments: [word(&random), Int.random(in: 0...1_000_000, using: &random), key])
            }
        case 35..<42:
            // Delete a parent: its children go with it (ON DELETE CASCADE).
            let key = parents.randomElement(using: &random)!
            let cascaded = try Int.fetchOne(db, sql: "SELECT count(*) FROM child WHERE parent_id = ?", arguments: [key]) ?? 0
            try db.execute(sql: "DELETE FROM parent WHERE id = ?", arguments: [key])
            return (cascaded, true)
        case _ where (42..<62).contains(roll) || children.isEmpty:
            // Insert a child of an existing parent (or re-parent an existing one).
            let key = CloudConvergenceTrial.childKeys.randomElement(using: &random)!
            try db.execute(
                sql: """
                    INSERT INTO child(id, parent_id, v, note) VALUES (?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET parent_id = excluded.parent_id, v = excluded.v
                    """,
                arguments: [key, parents.randomElement(using: &random)!, Int.random(in: 0...1_000_000, using: &random), word(&random)])
        case 62..<90:
            // Update some fields of a child, its parent among them at times.
            let key = children.randomElement(using: &random)!
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                try db.execute(sql: "UPDATE child SET v = ? WHERE id = ?", arguments: [Int.random(in: 0...1_000_000, using: &random), key])
            case 1: try db.execute(sql: "UPDATE child SET note = ? WHERE id = ?", arguments: [word(&random), key])
            case 2:
                try db.execute(
                    sql: "UPDATE child SET parent_id = ? WHERE id = ?", arguments: [parents.randomElement(using: &random)!, key])
            default:
                try db.execute(
                    sql: "UPDATE child SET v = ?, note = ? WHERE id = ?",
                    arguments: [Int.random(in: 0...1_000_000, using: &random), word(&random), key])
            }
        default:
            let key = children.randomElement(using: &random)!
            try db.execute(sql: "DELETE FROM child WHERE id = ?", arguments: [key])
        }
        return (0, false)
    }
}
