#if Postgres
    import Foundation
    import GRDB
    import GroupStore
    import Logging
    import PostgresTestServer
    import Subprocesses

    /// Part of section 10: many groups, each a `groupstore cloud run` process,
    /// syncing through one PostgreSQL server: a burst of commits in one group →
    /// the time until every group has all of it, and the CPU the server's
    /// processes spent meanwhile (from `/proc`).
    struct FleetScenario {
        let bench: Bench
        let server: PostgresServer

        func run() async throws -> TableRow {
            let groups = bench.quick ? 10 : 50
            let burst = 100
            let executable = Subprocess.productsDirectory.appendingPathComponent("groupstore")
            guard FileManager.default.isExecutableFile(atPath: executable.path) else {
                throw BenchFailure("\(executable.path) is missing: build it first (swift build -c release)")
            }
            try server.createRole("bench_fleet")
            try server.psql("GRANT groupstore_user TO bench_fleet")
            let root = try bench.directory("fleet", on: .tmpfs)
            var pools: [DatabasePool] = []
            var writer: GroupStore?
            for index in 0..<groups {
                var configuration = GroupConfiguration(
                    directory: "\(root)/g\(index)", member: try MemberName("app"), logger: Logger(label: "bench"))
                var migrator = DatabaseMigrator()
                migrator.registerMigration("schema") { db in try db.execute(sql: "CREATE TABLE note(id TEXT PRIMARY KEY, n INTEGER)") }
                configuration.migrator = migrator
                configuration.pruneInterval = nil
                let store = try await GroupStore.open(configuration)
                if index == 0 { writer = store } else { await store.close() }
                var readOnly = Configuration()
                readOnly.readonly = true
                pools.append(try DatabasePool(path: "\(root)/g\(index)/store.sqlite", configuration: readOnly))
            }
            guard let writer else { throw BenchFailure("no writer") }
            defer { writer.closeBlocking() }
            let url = server.url(user: "bench_fleet")
            var children: [Subprocess] = []
            defer { for child in children { child.send(SIGTERM) } }
            for index in 0..<groups {
                children.append(
                    try Subprocess(
                        executable,
                        ["cloud", "run", "--group", "\(root)/g\(index)", "--remote", url, "--tables", "note", "--format", "jsonl"],
                        name: "bridge \(index)"))
            }
            // Every bridge through its first sync.
            for child in children {
                let synced = child.wait(timeout: 120) { output, _, exit -> Bool? in
                    if exit != nil { return false }
                    return output.contains { $0.contains("\"finished\"") } ? true : nil
                }
                guard synced == true else { throw BenchFailure("\(child.name) did not sync: \(child.errors.suffix(3))") }
            }
            let cpuBefore = Self.serverCPUSeconds()
            let started = monotonicSeconds()
            for batch in 0..<10 {
                try await writer.write { db in
                    for row in 0..<(burst / 10) {
                        try db.execute(sql: "INSERT INTO note VALUES (?, ?)", arguments: ["b\(batch)-\(row)", row])
                    }
                }
            }
            var done = Set<Int>()
            while done.count < groups {
                for (index, pool) in pools.enumerated() where !done.contains(index) {
                    let count = try await pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM note") ?? 0 }
                    if count >= burst { done.insert(index) }
                }
                if monotonicSeconds() - started > 300 { throw BenchFailure("only \(done.count) of \(groups) groups converged in 300 s") }
                try await Task.sleep(for: .milliseconds(5))
            }
            let seconds = monotonicSeconds() - started
            let cpu = Self.serverCPUSeconds() - cpuBefore
            return TableRow(
                section: PostgresScenario.section,
                what: "\(groups) groups (processes) through one server: a burst of \(burst) rows in 10 commits → in every group", unit: "s",
                value: seconds, reference: String(format: "server CPU meanwhile: %.2f s (%.0f %% of a core)", cpu, 100 * cpu / seconds))
        }

        /// User and system CPU of every process of the server's user, in seconds.
        static func serverCPUSeconds() -> Double {
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            var total = 0.0
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(entry) != nil {
                guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")"), stat[..<close].contains("(postgres")
                else { continue }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                // After the command: state is field 3, utime 14 and stime 15 (1-based in proc(5)).
                guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
                total += (user + system) / ticks
            }
            return total
        }
    }
#endif  // Postgres
