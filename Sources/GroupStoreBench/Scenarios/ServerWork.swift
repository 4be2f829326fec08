#if Postgres
    import Foundation
    import PostgresTestServer

    /// The server's transactions and CPU for each of a run's phases, per
    /// commit, with autovacuum paused from ``start()`` to ``finish()`` (its
    /// workers' transactions count in `xact_commit` too, at moments of their own).
    ///
    /// The transactions come from `pg_stat_database`, which a backend updates
    /// from its own counts after a transaction, but at most once a second:
    /// the counts of a backend's last transactions of a busy moment wait
    /// until it has been idle for 10 s (PostgreSQL 15, `pgstat.c`,
    /// `PGSTAT_IDLE_INTERVAL`), so a count read sooner takes in part of the
    /// phase before (docs/PERFORMANCE.md, "seventh session", has what that
    /// did). The count is read once it has held still for ``settled`` (but
    /// for the reads, each a transaction of its own, and the gateways'
    /// listener probes, one each 5 s), and a phase is what changed between
    /// the counts before and after it, less the reads. The CPU (`/proc`) is
    /// the phase's alone.
    final class ServerWork {
        let server: PostgresServer
        /// How long the count must hold still: longer than a backend's idle wait.
        static let settled = Duration.seconds(11)
        /// When the count is read anyway (PostgreSQL forces a backend's flush after 60 s).
        static let bound = Duration.seconds(65)
        private var count = 0
        /// The reads made so far (all but the last are in the count).
        private var reads = 0

        init(server: PostgresServer) { self.server = server }

        /// Pauses autovacuum, and reads the count once settled.
        func start() async throws {
            try setAutovacuum(false)
            count = try await settledCount()
        }

        /// Runs `body`, which makes `commits` commits; the server's
        /// transactions and CPU seconds per commit meanwhile.
        func perCommit(_ commits: Int, _ body: () async throws -> Void) async throws -> (transactions: Double, cpu: Double) {
            let cpuBefore = FleetScenario.serverCPUSeconds()
            try await body()
            let cpu = FleetScenario.serverCPUSeconds() - cpuBefore
            let before = count
            count = try await settledCount()
            return (Double(count - before) / Double(commits), cpu / Double(commits))
        }

        /// Lets autovacuum run again.
        func finish() { try? setAutovacuum(true) }

        /// `xact_commit` once it held still for ``settled``, less the reads'
        /// own transactions.
        private func settledCount() async throws -> Int {
            let started = ContinuousClock.now
            var last = try read()
            var still = ContinuousClock.now
            while ContinuousClock.now - still < Self.settled, ContinuousClock.now - started < Self.bound {
                try await Task.sleep(for: .milliseconds(500))
                let now = try read()
                // The read before, and a listener probe or two.
                if now - last > 3 { still = .now }
                last = now
            }
            return last - (reads - 1)
        }

        private func read() throws -> Int {
            reads += 1
            return Int(try server.psql("SELECT sum(xact_commit) FROM pg_stat_database")) ?? 0
        }

        private func setAutovacuum(_ on: Bool) throws {
            try server.psql("ALTER SYSTEM SET autovacuum = \(on ? "on" : "off")")
            try server.psql("SELECT pg_reload_conf()")
        }
    }
#endif  // Postgres
