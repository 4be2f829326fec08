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
        // A directory of this run alone (as each hop path has: see `hops`).
        let root = try bench.directory("cloud-\(UUID().uuidString.prefix(8))", on: .disk)
        var rows: [TableRow] = []
        if parts.contains("latency") {
            rows += try await latency(section: section, storage: "tmpfs")
            rows += try await latency(section: section, storage: "disk")
        }
        if parts.contains("initial") { rows += try await initialSync(root: root, section: section) }
        if parts.contains("rate") { rows += try await uploadRate(root: root, section: section) }
        return rows
    }

    func open(_ directory: String, _ member: String) async throws -> GroupStore {
        var configuration = GroupConfiguration(directory: directory, member: try MemberName(member), logger: Logger(label: "bench"))
        var migrator = DatabaseMigrator()
        migrator.registerMigration("schema") { db in try db.execute(sql: Self.schema) }
        configuration.migrator = migrator
        configuration.pruneInterval = nil
        return try await GroupStore.open(configuration)
    }

    func bridge(_ directory: String, remote: any CloudDatabase) throws -> CloudSync {
        var configuration = CloudSyncConfiguration(group: directory, remote: remote, logger: Logger(label: "bench"))
        configuration.privateTables = ["note"]
        return CloudSync(configuration)
    }

    /// Runs `sync` until cancelled; returns once it finished its first sync.
    func start(_ sync: CloudSync) async throws -> Task<Void, any Error> {
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

    private func latency(section: String, storage: String) async throws -> [TableRow] {
        latencyRows(try await Self.hops([self], storage: storage)[0], storage: storage)
    }

    /// The hop's samples on each of `scenarios`' paths (``HopPath``). Several
    /// paths take theirs in turn, in blocks, so that the host's busy moments
    /// fall on each alike; only the path of the block runs its bridges (a
    /// direct bridge fetches on every commit of its server, the other
    /// path's too). The first 5 samples of a block are a warm-up.
    static func hops(_ scenarios: [CloudScenario], storage: String) async throws -> [[HopPath.Sample]] {
        var paths: [HopPath] = []
        defer { for path in paths { path.close() } }
        for scenario in scenarios {
            // Directories of this path alone: a path never meets what another's bridges may
            // still write while they stop (seen once: a group that synced as the other's role).
            let root = try scenario.bench.directory(
                "cloud-\(storage)-\(UUID().uuidString.prefix(8))", on: storage == "tmpfs" ? .tmpfs : .disk)
            let remoteA = try await scenario.remote("latency-\(storage)", root)
            let remoteB = try await scenario.remote("latency-\(storage)", root)
            paths.append(try await HopPath(scenario: scenario, root: root, remoteA: remoteA, remoteB: remoteB))
        }
        let samples = scenarios[0].bench.quick ? 50 : 400
        let blocks = scenarios.count > 1 ? (scenarios[0].bench.quick ? 2 : 8) : 1
        var taken = [[HopPath.Sample]](repeating: [], count: paths.count)
        for _ in 0..<blocks {
            for (number, path) in paths.enumerated() {
                try await path.start()
                for index in 0..<(samples / blocks + 5) {
                    let sample = try await path.sample()
                    if index >= 5 { taken[number].append(sample) }
                }
                await path.stop()
            }
        }
        return taken
    }

    /// The rows of one path's hop samples.
    func latencyRows(_ samples: [HopPath.Sample], storage: String) -> [TableRow] {
        let local = samples.map(\.local)
        let remoteTimes = samples.map(\.remote)
        let fromCall = samples.map(\.fromCall)
        var stageTimes: [[Double]] = Array(repeating: [], count: Self.hopStages.count)
        for sample in samples {
            for (stage, time) in sample.stages.enumerated() where !time.isNaN { stageTimes[stage].append(time) }
        }
        let slowest: (total: Double, times: [Double]) =
            samples.max { $0.remote < $1.remote }.map { ($0.remote, $0.stages) } ?? (-.infinity, [])
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
                        reference: "\(stageTimes[index].count) of \(samples.count) samples"))
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
