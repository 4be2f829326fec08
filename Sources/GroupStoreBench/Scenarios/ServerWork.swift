#if Postgres
    import Foundation
    import GroupStoreCloudPostgres
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
    /// for the gateways' listener probes), and a phase is what changed between
    /// the counts before and after it, less the probes of that time (each
    /// listener's one each `PostgresRemote.probeInterval`: a gateway's
    /// background, the same whatever the phase). The count is of the
    /// database the gateways use, read from another one (`template1`), so the
    /// reads (each a connection of its own, whose start is a transaction too)
    /// are not in it. The CPU (`/proc`) is the phase's alone.
    final class ServerWork {
        let server: PostgresServer
        /// The listeners probing the server meanwhile (one a gateway).
        let listeners: Int
        /// How long the count must hold still: longer than a backend's idle wait.
        static let settled = Duration.seconds(11)
        /// When the count is read anyway (PostgreSQL forces a backend's flush after 60 s).
        static let bound = Duration.seconds(65)
        /// The database whose transactions are counted.
        static let database = "postgres"
        private var count = 0
        private var countedAt = ContinuousClock.now

        init(server: PostgresServer, listeners: Int) {
            self.server = server
            self.listeners = listeners
        }

        /// Pauses autovacuum, and reads the count once settled.
        func start() async throws {
            try setAutovacuum(false)
            (count, countedAt) = try await settledCount()
        }

        /// Runs `body`, which makes `commits` commits; the server's
        /// transactions (less the listeners' probes) and CPU seconds per commit meanwhile.
        func perCommit(_ commits: Int, _ body: () async throws -> Void) async throws -> (transactions: Double, cpu: Double) {
            let cpuBefore = FleetScenario.serverCPUSeconds()
            try await body()
            let cpu = FleetScenario.serverCPUSeconds() - cpuBefore
            let (before, since) = (count, countedAt)
            (count, countedAt) = try await settledCount()
            // The probes' expected number: the phase's own transactions are never fewer than none.
            let probes = Double(listeners) * ((countedAt - since) / PostgresRemote.probeInterval)
            return (max(0, Double(count - before) - probes) / Double(commits), cpu / Double(commits))
        }

        /// Lets autovacuum run again.
        func finish() { try? setAutovacuum(true) }

        /// `xact_commit` once it held still for ``settled``, and when it was read.
        private func settledCount() async throws -> (Int, ContinuousClock.Instant) {
            let started = ContinuousClock.now
            var last = try read()
            var still = ContinuousClock.now
            while ContinuousClock.now - still < Self.settled, ContinuousClock.now - started < Self.bound {
                try await Task.sleep(for: .milliseconds(500))
                let now = try read()
                // A listener probe or two.
                if now - last > 2 { still = .now }
                last = now
            }
            return (last, .now)
        }

        private func read() throws -> Int {
            let sql = "SELECT xact_commit FROM pg_stat_database WHERE datname = '\(Self.database)'"
            return Int(try server.psql(sql, database: "template1")) ?? 0
        }

        private func setAutovacuum(_ on: Bool) throws {
            try server.psql("ALTER SYSTEM SET autovacuum = \(on ? "on" : "off")")
            try server.psql("SELECT pg_reload_conf()")
        }
    }
#endif  // Postgres
