import Foundation
import GRDB
import GroupStore
import Subprocesses

/// The syncing member of a group SIGKILLed at random points of its syncs:
/// nothing lost, nothing applied or uploaded twice, the standby takes over.
///
/// Each trial: groups A and B share one embedded remote (a file); table
/// `item(id TEXT PRIMARY KEY, n INTEGER, note TEXT)`. Two `groupstore cloud
/// run` for A (one syncs, one stands by), one for B. This process writes in
/// A through the library (inserts, updates, deletes; every version of a row
/// gets a higher `n`), and SIGKILLs A's syncing member a few times, at a
/// seeded random delay after a burst of writes (0 ms — uploads in flight — to
/// 300 ms), writing on while the standby takes over; a new standby is started
/// after each takeover. Then writing stops and, once A's status shows nothing
/// pending and B's table equals A's (bounded wait), it checks:
/// - A's rows are what the writer last wrote (nothing lost);
/// - B's rows equal A's, and the remote's live records equal them;
/// - per record, the remote's change log holds at most as many accepted
///   changes as the writer made versions of it (nothing uploaded twice);
/// - B applied every row's versions in the writer's order, none twice (an
///   audit trigger in B logs every insert and update: `n` strictly increases);
/// - the standby said "syncing" within ``takeoverBound`` of each kill;
/// - every bridge exits 0 on SIGTERM; nothing parked; integrity_check ok.
struct CloudKillTrial {
    let suite: FaultSuite
    var harness: CloudHarness { CloudHarness(suite: suite) }

    static let takeoverBound: TimeInterval = 5
    static let settleBound: TimeInterval = 60
    static let keys = (0..<60).map { String(format: "k%03d", $0) }

    struct Totals {
        var trials = 0
        var kills = 0
        var killsDuringSync = 0
        var transactions = 0
        var rowWrites = 0
        var uploads = 0
        var records = 0
        var takeover = Durations()
        var settle = Durations()
        var conflicts = 0
    }

    func run(trials: Int, seed: UInt64) throws -> [Outcome] {
        var totals = Totals()
        var failures: [String] = []
        for trial in 0..<trials {
            let trialSeed = seed &+ UInt64(trial)
            // Kills and takeovers count in every trial; the data checked, in the trials that held.
            var attempt = totals
            defer {
                totals.kills = attempt.kills
                totals.killsDuringSync = attempt.killsDuringSync
                totals.takeover = attempt.takeover
            }
            do {
                try runTrial(trial, seed: trialSeed, totals: &attempt)
                totals = attempt
                totals.trials += 1
                FileHandle.standardError.write(Data("faults: cloud kill trial \(trial + 1)/\(trials) held (seed \(trialSeed))\n".utf8))
            } catch {
                failures.append(
                    "trial \(trial + 1) (seed \(trialSeed); replay: --only cloud --cloud-trials 1 --cloud-seed \(trialSeed)): \(error)")
                FileHandle.standardError.write(
                    Data("faults: cloud kill trial \(trial + 1)/\(trials) FAILED (seed \(trialSeed)): \(error)\n".utf8))
            }
        }
        let figures = String(
            format:
                "seed %llu; %ld kills of the syncing member (%ld with a sync under way), a standby took over after each: median %.2f s, max %.2f s (bound %.0f s); "
                + "in the %ld trials that held: %ld transactions (%ld row writes) by the writer, %ld changes accepted by the remote, %ld conflicts settled, "
                + "%ld live records checked: 0 lost, 0 uploaded twice, 0 applied twice or out of order; settled in median %.2f s, max %.2f s",
            seed, totals.kills, totals.killsDuringSync, totals.takeover.median, totals.takeover.max, Self.takeoverBound, totals.trials,
            totals.transactions, totals.rowWrites, totals.uploads, totals.conflicts, totals.records, totals.settle.median, totals.settle.max
        )
        return [
            Outcome(
                fault: "cloud: syncing member SIGKILLed at random points of its syncs (groups A, B, one embedded remote)",
                trials: trials, passed: failures.isEmpty,
                figures: failures.isEmpty
                    ? figures
                    : "\(failures.count) of \(trials) trials failed (the first 3 below; every failure on stderr): "
                        + failures.prefix(3).joined(separator: "; ") + ". " + figures)
        ]
    }

    private func runTrial(_ trial: Int, seed: UInt64, totals: inout Totals) throws {
        let folder = try suite.newFolder("cloud-kill")
        do {
            try runTrial(in: folder, seed: seed, totals: &totals)
            suite.finish(folder: folder, failed: false)
        } catch {
            let kept = suite.finish(folder: folder, failed: true)
            throw FaultFailure("\(error) [groups and remote kept in \(kept ?? folder)]")
        }
    }

    private func runTrial(in folder: String, seed: UInt64, totals: inout Totals) throws {
        var random = SeededGenerator(seed: seed)
        let groupA = folder + "/A"
        let groupB = folder + "/B"
        let remote = folder + "/cloud.sqlite"

        // The writer creates A and its table; B gets the table and an audit of every value it takes.
        let store = try GroupStore(.cloudTrialWriter(groupA))
        defer { store.closeBlocking() }
        try store.writeBlocking { db in try db.execute(sql: "CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER NOT NULL, note TEXT)") }
        let (status, errors) = try suite.exec(
            groupB, "setup",
            """
            CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER NOT NULL, note TEXT);
            CREATE TABLE item_audit(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, op TEXT NOT NULL, n INTEGER);
            CREATE TRIGGER item_audit_insert AFTER INSERT ON item BEGIN INSERT INTO item_audit(id, op, n) VALUES (NEW.id, 'insert', NEW.n); END;
            CREATE TRIGGER item_audit_update AFTER UPDATE ON item BEGIN INSERT INTO item_audit(id, op, n) VALUES (NEW.id, 'update', NEW.n); END;
            CREATE TRIGGER item_audit_delete AFTER DELETE ON item BEGIN INSERT INTO item_audit(id, op, n) VALUES (OLD.id, 'delete', OLD.n); END;
            """)
        guard status == 0 else { throw FaultFailure("setting up B failed: \(errors)") }

        var bridges: [Subprocess] = []
        defer {
            for bridge in bridges { bridge.stop() }
            CloudHarness.saveOutput(bridges, in: folder)
        }
        var index = 0
        func startBridge(_ group: String, _ label: String) throws -> Subprocess {
            index += 1
            let bridge = try harness.bridge(group, remote: remote, tables: ["item"], name: "cloud run \(label)#\(index)")
            bridges.append(bridge)
            return bridge
        }
        var active = try startBridge(groupA, "A")
        guard CloudHarness.waitSyncing(active, timeout: 30) else {
            throw FaultFailure("A's first bridge did not start: \(CloudHarness.tail(active))")
        }
        var standby = try startBridge(groupA, "A")
        guard CloudHarness.waitStandingBy(standby, timeout: 30) else {
            throw FaultFailure("A's second bridge did not stand by: \(CloudHarness.tail(standby))")
        }
        let bridgeB = try startBridge(groupB, "B")
        guard CloudHarness.waitSyncing(bridgeB, timeout: 30) else {
            throw FaultFailure("B's bridge did not start: \(CloudHarness.tail(bridgeB))")
        }

        var writer = ItemWriter(store: store)
        let kills = Int.random(in: 2...4, using: &random)
        for _ in 0..<kills {
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                try writer.burst(transactions: Int.random(in: 1...25, using: &random), random: &random)
                usleep(UInt32.random(in: 0...60_000, using: &random))
            }
            let printed = active.output.count
            try writer.burst(transactions: Int.random(in: 1...25, using: &random), random: &random)
            // The instant: half the time inside the sync this burst woke (0–40 ms after it
            // started: fetching, uploading or acknowledging), else right after the burst
            // or anywhere in the next 300 ms.
            switch Int.random(in: 0..<4, using: &random) {
            case 0: break
            case 1: usleep(UInt32.random(in: 0...300_000, using: &random))
            default:
                _ = active.wait(timeout: 2) { lines, _, _ in
                    lines.dropFirst(printed).contains { $0.contains(#""event":"started""#) } ? true : nil
                }
                usleep(UInt32.random(in: 0...40_000, using: &random))
            }
            let eventsBefore = active.output
            active.send(SIGKILL)
            let killedAt = Date()
            // Writes go on while the standby takes over.
            try writer.burst(transactions: Int.random(in: 0...10, using: &random), random: &random)
            let tookOver = CloudHarness.waitSyncing(standby, timeout: Self.takeoverBound)
            let takeover = Date().timeIntervalSince(killedAt)
            guard tookOver else {
                throw FaultFailure(
                    String(
                        format: "the standby did not take over within %.0f s of the SIGKILL: %@", Self.takeoverBound,
                        CloudHarness.tail(standby)))
            }
            guard active.waitForExit(timeout: 10) == SIGKILL else { throw FaultFailure("\(active.name) did not die of SIGKILL") }
            totals.takeover.add(takeover)
            totals.kills += 1
            if Self.syncUnderWay(eventsBefore + active.output) { totals.killsDuringSync += 1 }
            active = standby
            standby = try startBridge(groupA, "A")
            guard CloudHarness.waitStandingBy(standby, timeout: 30) else {
                throw FaultFailure("a new standby for A did not stand by: \(CloudHarness.tail(standby))")
            }
        }
        try writer.burst(transactions: Int.random(in: 1...20, using: &random), random: &random)
        totals.transactions += writer.transactions
        totals.rowWrites += writer.rowWrites

        // Settle: A has nothing pending and B equals A (bounded).
        let columns = ["n", "note"]
        let settleStart = Date()
        var lastA: [String: String] = [:]
        var lastB: [String: String] = [:]
        while true {
            let statusA = try harness.status(groupA)
            let statusB = try harness.status(groupB)
            lastA = try CloudHarness.rows(groupA, "item", columns: columns)
            lastB = try CloudHarness.rows(groupB, "item", columns: columns)
            if statusA.pending == 0 && statusB.pending == 0 && lastA == lastB { break }
            if Date().timeIntervalSince(settleStart) > Self.settleBound {
                let differing = Set(lastA.keys).union(lastB.keys).filter { lastA[$0] != lastB[$0] }.sorted()
                throw FaultFailure(
                    String(format: "not settled after %.0f s: ", Self.settleBound)
                        + "A pending \(statusA.pending), parked \(statusA.parked) \(statusA.parkedRecords.prefix(3)), last error \(statusA.lastError ?? "none"); "
                        + "B pending \(statusB.pending), parked \(statusB.parked), last error \(statusB.lastError ?? "none"); "
                        + "\(differing.count) rows differ between A and B (e.g. \(differing.prefix(3).map { "\($0): A \(lastA[$0] ?? "absent"), B \(lastB[$0] ?? "absent")" })); "
                        + "active \(CloudHarness.tail(active)); B \(CloudHarness.tail(bridgeB))")
            }
            usleep(100_000)  // a poll of state, bounded above
        }
        totals.settle.add(Date().timeIntervalSince(settleStart))

        // Nothing lost: A holds what the writer last wrote.
        let expected = writer.expectedRows()
        if lastA != expected {
            let differing = Set(lastA.keys).union(expected.keys).filter { lastA[$0] != expected[$0] }.sorted()
            throw FaultFailure(
                "A's rows differ from what the writer last wrote at \(differing.count) keys: "
                    + differing.prefix(4).map { "\($0): wrote \(expected[$0] ?? "deleted"), A has \(lastA[$0] ?? "nothing")" }.joined(
                        separator: "; ")
                    + " (history of \(differing.first ?? ""): \(writer.history[differing.first ?? ""] ?? []))")
        }
        // The remote holds exactly those live records.
        let remoteLive = try CloudHarness.remoteRecords(remote, type: "item", columns: columns)
        if remoteLive != expected {
            let differing = Set(remoteLive.keys).union(expected.keys).filter { remoteLive[$0] != expected[$0] }.sorted()
            throw FaultFailure(
                "the remote's live records differ at \(differing.count) keys: "
                    + differing.prefix(4).map { "\($0): wrote \(expected[$0] ?? "deleted"), remote \(remoteLive[$0] ?? "nothing")" }.joined(
                        separator: "; "))
        }
        // Nothing uploaded twice: accepted changes per record ≤ versions the writer made.
        let accepted = try CloudHarness.remoteChangeCounts(remote, type: "item")
        for (name, count) in accepted.sorted(by: { $0.key < $1.key }) where count > writer.versions[name, default: 0] {
            throw FaultFailure(
                "record \(name): \(count) changes accepted by the remote for \(writer.versions[name, default: 0]) versions written (uploaded twice); "
                    + "writer's history \(writer.history[name] ?? [])")
        }
        totals.uploads += accepted.values.reduce(0, +)
        totals.records += expected.count
        // Nothing applied twice or out of order in B.
        let audit = try CloudHarness.read(groupB + "/store.sqlite") { db in
            try Row.fetchAll(db, sql: "SELECT id, op, n FROM item_audit ORDER BY seq").map {
                ($0["id"] as String, $0["op"] as String, $0["n"] as Int64)
            }
        }
        var seen: [String: Int64] = [:]
        for (id, op, n) in audit where op != "delete" {
            if let previous = seen[id], n <= previous {
                let trail = audit.filter { $0.0 == id }.map { "\($0.1) \($0.2)" }
                throw FaultFailure(
                    "B took \(id) at n=\(n) after n=\(previous) (\(n == previous ? "applied twice" : "went back")); B's trail: \(trail); "
                        + "writer's history: \(writer.history[id] ?? [])")
            }
            seen[id] = n
        }
        // Both groups' bridges report nothing pending or parked, no error.
        let statusA = try harness.status(groupA)
        let statusB = try harness.status(groupB)
        for (name, status) in [("A", statusA), ("B", statusB)] {
            guard status.live, status.pending == 0, status.parked == 0, status.lastError == nil else {
                throw FaultFailure(
                    "\(name)'s status after settling: live \(status.live), pending \(status.pending), parked \(status.parked) \(status.parkedRecords.prefix(3)), last error \(status.lastError ?? "none")"
                )
            }
        }
        totals.conflicts += statusA.conflicts + statusB.conflicts
        let unclean = CloudHarness.terminate([active, standby, bridgeB])
        guard unclean.isEmpty else { throw FaultFailure("bridges that did not exit 0 on SIGTERM: \(unclean)") }
        for group in [groupA, groupB] {
            guard try CloudHarness.read(group + "/store.sqlite", { try String.fetchOne($0, sql: "PRAGMA integrity_check") }) == "ok" else {
                throw FaultFailure("integrity_check of \(group) failed")
            }
        }
    }

    /// Whether a bridge's jsonl events end inside a sync (a `started` with no `finished` after it).
    static func syncUnderWay(_ lines: [String]) -> Bool {
        for line in lines.reversed() {
            if line.contains(#""event":"finished""#) { return false }
            if line.contains(#""event":"started""#) { return true }
        }
        return false
    }
}

/// The writer of the kill trials: random inserts, updates and deletes of
/// `item` rows through the library, with a model of what it committed.
struct ItemWriter {
    let store: GroupStore
    /// What the writer last wrote, per key (absent: deleted or never written).
    private(set) var rows: [String: (n: Int64, note: String)] = [:]
    /// Committed versions per key, deletions included.
    private(set) var versions: [String: Int] = [:]
    /// Each key's committed versions in order, for failure messages.
    private(set) var history: [String: [String]] = [:]
    private var counters: [String: Int64] = [:]
    private(set) var transactions = 0
    private(set) var rowWrites = 0

    init(store: GroupStore) { self.store = store }

    /// `transactions` transactions of 1 to 8 distinct keys each.
    mutating func burst(transactions count: Int, random: inout SeededGenerator) throws {
        for _ in 0..<count {
            let keys = CloudKillTrial.keys.shuffled(using: &random).prefix(Int.random(in: 1...8, using: &random))
            var changes: [(key: String, row: (n: Int64, note: String)?)] = []
            for key in keys {
                if rows[key] == nil || Int.random(in: 0..<4, using: &random) > 0 {
                    let n = counters[key, default: 0] + 1
                    counters[key] = n
                    changes.append((key, (n, "v\(n)-\(UInt32.random(in: 0...UInt32.max, using: &random))")))
                } else {
                    changes.append((key, nil))
                }
            }
            let planned = changes
            try store.writeBlocking { db in
                for (key, row) in planned {
                    if let row {
                        try db.execute(
                            sql:
                                "INSERT INTO item(id, n, note) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET n = excluded.n, note = excluded.note",
                            arguments: [key, row.n, row.note])
                    } else {
                        try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [key])
                    }
                }
            }
            for (key, row) in planned {
                rows[key] = row
                versions[key, default: 0] += 1
                history[key, default: []].append(row.map { "n=\($0.n)" } ?? "deleted")
            }
            transactions += 1
            rowWrites += planned.count
        }
    }

    /// The rows in the form of ``CloudHarness/rows(_:_:columns:)`` (`n`, `note`).
    func expectedRows() -> [String: String] {
        rows.mapValues { "i:\($0.n)|t:\($0.note)" }
    }
}
