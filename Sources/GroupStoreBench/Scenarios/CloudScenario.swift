import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import Logging
import Synchronization

/// Sections 9 and 10: the cloud bridge through the embedded remote, or
/// through a PostgreSQL server, in one process (two groups, each with a
/// running bridge, sharing one remote): commit in group A → did-save in
/// group B, beside the same commit's did-save inside group A; an initial sync
/// of 100,000 records up and down; the sustained upload rate of a busy
/// writer.
struct CloudScenario {
    let bench: Bench
    /// Names the section.
    let section: String
    /// The remote of one part (`latency-tmpfs`, `latency-disk`, `initial`,
    /// `rate`): each part has
    /// its own (a file under the part's folder, or a role of its own).
    let remote: @Sendable (_ part: String, _ root: String) async throws -> any CloudDatabase
    /// The latency target, for the table.
    let latencyTarget: String
    static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, n INTEGER, body TEXT)"

    static let parts = ["latency", "initial", "rate"]

    /// Through the embedded remote: a file per part.
    static func embedded(_ bench: Bench) -> CloudScenario {
        CloudScenario(
            bench: bench, section: "9. cloud bridge (embedded remote)",
            remote: { part, root in
                let remote = try EmbeddedRemote(path: root + "/\(part)-cloud.sqlite", user: "bench")
                // Runs until the process ends: the remote's push-hint watch.
                Task { try? await remote.run() }
                return remote
            }, latencyTarget: "p50 ≤ 2000 µs")
    }

    func run(parts: Set<String>) async throws -> [TableRow] {
        // Directories of this run alone: a run after another (direct, then through a gateway) never
        // meets what the other's bridges may still write while they stop (seen once: a group that
        // synced as the other run's role).
        let run = UUID().uuidString.prefix(8)
        let root = try bench.directory("cloud-\(run)", on: .disk)
        var rows: [TableRow] = []
        if parts.contains("latency") {
            rows += try await latency(root: try bench.directory("cloud-tmpfs-\(run)", on: .tmpfs), section: section, storage: "tmpfs")
            rows += try await latency(root: root, section: section, storage: "disk")
        }
        if parts.contains("initial") { rows += try await initialSync(root: root, section: section) }
        if parts.contains("rate") { rows += try await uploadRate(root: root, section: section) }
        return rows
    }

    private func open(_ directory: String, _ member: String) async throws -> GroupStore {
        var configuration = GroupConfiguration(directory: directory, member: try MemberName(member), logger: Logger(label: "bench"))
        var migrator = DatabaseMigrator()
        migrator.registerMigration("schema") { db in try db.execute(sql: Self.schema) }
        configuration.migrator = migrator
        configuration.pruneInterval = nil
        return try await GroupStore.open(configuration)
    }

    private func bridge(_ directory: String, remote: any CloudDatabase) throws -> CloudSync {
        var configuration = CloudSyncConfiguration(group: directory, remote: remote, logger: Logger(label: "bench"))
        configuration.privateTables = ["note"]
        return CloudSync(configuration)
    }

    /// Runs `sync` until cancelled; returns once it finished its first sync.
    private func start(_ sync: CloudSync) async throws -> Task<Void, any Error> {
        let events = sync.events()
        let task = Task { try await sync.run() }
        for await event in events {
            if case .finished(let summary) = event {
                if let error = summary.error { throw BenchFailure("bridge failed: \(error)") }
                break
            }
        }
        return task
    }

    private func latency(root: String, section: String, storage: String) async throws -> [TableRow] {
        // A remote each, as two hosts have: a bridge sharing its remote with
        // the other would also fetch its own upload's echo (see PushHints).
        let remoteA = try await self.remote("latency-\(storage)", root)
        let remoteB = try await self.remote("latency-\(storage)", root)
        let writer = try await open(root + "/a", "writer")
        let peer = try await open(root + "/a", "peer")
        let reader = try await open(root + "/b", "reader")
        defer {
            writer.closeBlocking()
            peer.closeBlocking()
            reader.closeBlocking()
        }
        let peerSaves = peer.saves()
        let readerSaves = reader.saves()
        try await peer.start()
        try await reader.start()
        let syncA = try bridge(root + "/a", remote: remoteA)
        let syncB = try bridge(root + "/b", remote: remoteB)
        let marks = Mutex<[(side: Character, stage: SyncStage, at: Double)]>([])
        syncA.traceStages { stage, at in marks.withLock { $0.append(("A", stage, at)) } }
        syncB.traceStages { stage, at in marks.withLock { $0.append(("B", stage, at)) } }
        let bridgeA = try await start(syncA)
        let bridgeB = try await start(syncB)
        defer {
            bridgeA.cancel()
            bridgeB.cancel()
        }
        var peerIterator = peerSaves.makeAsyncIterator()
        var readerIterator = readerSaves.makeAsyncIterator()
        var local: [Double] = []
        var remoteTimes: [Double] = []
        var fromCall: [Double] = []
        var stageTimes: [[Double]] = Array(repeating: [], count: Self.hopStages.count)
        var slowest: (total: Double, times: [Double]) = (-.infinity, [])
        let samples = bench.quick ? 50 : 400
        for index in 0..<(samples + 10) {
            let key = "k\(index)"
            marks.withLock { $0.removeAll() }
            let calledAt = DeliveryTrace.now()
            try await writer.write { db in try db.execute(sql: "INSERT INTO note VALUES (?, ?, 'x')", arguments: [key, index]) }
            // Timed from the commit, as the core table is: the save's commit
            // time (its seal, inside the transaction), read from the peer's copy.
            var committedAt = Double.nan
            var localAt = Double.nan
            var remoteAt = Double.nan
            while committedAt.isNaN || remoteAt.isNaN {
                // Both streams are awaited in turn; each records the time its save arrived.
                if committedAt.isNaN, let save = await peerIterator.next(), save.change(of: "note")?.inserted.contains(.text(key)) == true {
                    localAt = DeliveryTrace.now()
                    committedAt = save.committedAt.timeIntervalSince1970 * 1e6
                }
                if remoteAt.isNaN {
                    guard let save = await readerIterator.next() else { throw BenchFailure("group B's stream ended") }
                    if save.author == "cloud", save.change(of: "note")?.inserted.contains(.text(key)) == true {
                        remoteAt = DeliveryTrace.now()
                    }
                }
            }
            guard index >= 10 else { continue }
            local.append(localAt - committedAt)
            remoteTimes.append(remoteAt - committedAt)
            fromCall.append(remoteAt - calledAt)
            let times = Self.hopTimes(marks.withLock { $0 }, from: committedAt, delivered: remoteAt)
            for (stage, time) in times.enumerated() where !time.isNaN { stageTimes[stage].append(time) }
            if remoteAt - committedAt > slowest.total { slowest = (remoteAt - committedAt, times) }
        }
        let inGroup = Distribution(local)
        let across = Distribution(remoteTimes)
        var rows = [
            TableRow(
                section: section, what: "commit in group A → did-save in group B (through the remote, \(storage))", unit: "µs",
                distribution: across,
                reference: String(format: "in group A: %.0f / p99 %.0f µs", inGroup.median, inGroup.p99),
                ratio: across.median / inGroup.median,
                target: latencyTarget),
            TableRow(
                section: section, what: "  the same from the call of the async write in A (\(storage))", unit: "µs",
                distribution: Distribution(fromCall), reference: "the write's own hand-offs included"),
        ]
        rows.append(
            TableRow(
                section: section, what: "  the slowest sample (\(storage)): its longest step", unit: "µs", value: slowest.total,
                reference: Self.longestStep(slowest.times)))
        if storage == "tmpfs" {
            for (index, name) in Self.hopStages.enumerated() {
                rows.append(
                    TableRow(
                        section: section, what: "  commit → " + name, unit: "µs", distribution: Distribution(stageTimes[index]),
                        reference: "\(stageTimes[index].count) of \(samples) samples"))
            }
        }
        return rows
    }

    /// The points of one hop through the remote, each timed from the commit.
    static let hopStages = [
        "A's bridge has the save", "A's upload prepared (read, recorded as sent)", "the remote answered A's upload",
        "B hinted (A's upload written)", "B's sync started", "B's fetch sent", "the remote answered B's fetch",
        "B's apply started", "B applied it (committed)", "B's member has the save",
    ]

    /// The longest step between two marks of one sample, for telling a slow
    /// sample's cause (a remote call, a wake-up, the host) at a glance.
    static func longestStep(_ times: [Double]) -> String {
        var previous = (name: "commit", at: 0.0)
        var longest = (from: "", to: "", took: -1.0)
        for (name, at) in zip(hopStages, times) where !at.isNaN {
            if at - previous.at > longest.took { longest = (previous.name, name, at - previous.at) }
            previous = (name, at)
        }
        guard longest.took >= 0 else { return "no stage marks" }
        return "\(Int(longest.took.rounded())) µs from \"\(longest.from)\" to \"\(longest.to)\""
    }

    /// When each of ``hopStages`` was reached in one sample, from the
    /// commit (NaN where a mark is missing): A's first marks after the
    /// commit, and B's first after A's upload was prepared.
    static func hopTimes(_ marks: [(side: Character, stage: SyncStage, at: Double)], from committed: Double, delivered: Double) -> [Double]
    {
        func first(_ side: Character, _ stage: SyncStage, after time: Double) -> Double {
            marks.first { $0.side == side && $0.stage == stage && $0.at >= time }?.at ?? .nan
        }
        let prepared = first("A", .uploadPrepared, after: committed)
        let hinted = first("B", .hintSeen, after: prepared)
        let fetched = first("B", .fetchAnswered, after: hinted)
        let points = [
            first("A", .saveSeen, after: committed), prepared, first("A", .uploadAnswered, after: prepared), hinted,
            first("B", .syncStarted, after: hinted), first("B", .fetchSent, after: hinted), fetched,
            first("B", .applyStarted, after: fetched),
            first("B", .applied, after: fetched), delivered,
        ]
        return points.map { $0 - committed }
    }

    private func initialSync(root: String, section: String) async throws -> [TableRow] {
        let count = bench.quick ? 10_000 : 100_000
        let remote = try await self.remote("initial", root)
        let source = try await open(root + "/initial-a", "writer")
        try await source.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO note VALUES (?, ?, ?)")
            for index in 0..<count { try statement.execute(arguments: ["r\(index)", index, "body of record \(index)"]) }
        }
        await source.close()
        let target = try await open(root + "/initial-b", "reader")
        await target.close()
        var started = monotonicSeconds()
        let up = try await bridge(root + "/initial-a", remote: remote).syncOnce()
        let upSeconds = monotonicSeconds() - started
        started = monotonicSeconds()
        let down = try await bridge(root + "/initial-b", remote: remote).syncOnce()
        let downSeconds = monotonicSeconds() - started
        guard up.uploaded == count, down.fetched == count else {
            throw BenchFailure("initial sync moved \(up.uploaded) up / \(down.fetched) down of \(count): \(up.error ?? down.error ?? "")")
        }
        return [
            TableRow(
                section: section, what: "initial sync of \(count) records: upload (group A, disk)", unit: "s", value: upSeconds,
                target: "≤ 10 s"),
            TableRow(
                section: section, what: "initial sync of \(count) records: download (group B, disk)", unit: "s", value: downSeconds,
                target: "≤ 10 s"),
        ]
    }

    private func uploadRate(root: String, section: String) async throws -> [TableRow] {
        let remote = try await self.remote("rate", root)
        let writer = try await open(root + "/rate-a", "writer")
        defer { writer.closeBlocking() }
        let sync = try bridge(root + "/rate-a", remote: remote)
        let events = sync.events()
        let task = try await start(sync)
        defer { task.cancel() }
        let seconds = bench.quick ? 2.0 : 5.0
        let started = monotonicSeconds()
        var written = 0
        while monotonicSeconds() - started < seconds {
            let n = written
            try await writer.write { db in try db.execute(sql: "INSERT INTO note VALUES (?, ?, 'x')", arguments: ["w\(n)", n]) }
            written += 1
        }
        let writeRate = Double(written) / (monotonicSeconds() - started)
        // Until everything written is acknowledged by the remote.
        var uploaded = 0
        for await event in events {
            if case .finished(let summary) = event, summary.error == nil, summary.pending == 0 {
                let status = try CloudSyncStatus.read(group: root + "/rate-a")
                if status.pending == 0 { break }
            }
            if case .uploaded(let count) = event { uploaded += count }
        }
        let rate = Double(written) / (monotonicSeconds() - started)
        return [
            TableRow(
                section: section, what: "sustained upload, 1-row commits as fast as one writer goes (disk)", unit: "records/s", value: rate,
                reference: String(format: "writer alone: %.0f commits/s", writeRate), ratio: rate / writeRate)
        ]
    }
}
