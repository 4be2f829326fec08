import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc  // Linux only, like the package (inotify)
#endif

/// A throwaway PostgreSQL server for one test.
///
/// Each server runs from a copy of a per-process template data directory (made
/// once with `initdb --no-sync`, with 1 MB WAL segments so the copy is cheap),
/// listens on a Unix socket only, in a directory of its own, with `fsync` off
/// (committed data survives a crash of the server, not of the machine) and
/// `trust` authentication. The postmaster is a child of the test process,
/// polled for readiness every few milliseconds (`pg_ctl -w` polls every 100 ms).
/// When the tests run as root, `initdb` and the server run as the `postgres`
/// user (through `setpriv`); otherwise as the current user. `psql` always runs
/// as the current user.
///
/// Lifecycle calls (`restart`, `stop`) on one server are meant for the test
/// that owns it, not for concurrent use; `psql` may be called from any thread.
public final class PostgresServer: Sendable {
    /// The directory of the server's socket (`-k`), also holding `data/` and `server.log`.
    public let socketDirectory: String
    /// The port number, which only names the socket (`.s.PGSQL.<port>`): there is no TCP.
    public let port: Int

    /// The per-process setup (binaries, template) the server was made from.
    private let setup: Setup
    /// The postmaster's pid while it runs, and whether `stop()` was called.
    private let state = Mutex<(postmaster: pid_t?, stopped: Bool)>((nil, false))
    /// The server's data directory, a copy of the template.
    private var dataDirectory: String { socketDirectory + "/data" }
    /// The server's output (its log), kept across restarts.
    private var logFile: String { socketDirectory + "/server.log" }

    /// A server not started yet: see `start()`.
    private init(socketDirectory: String, port: Int, setup: Setup) {
        self.socketDirectory = socketDirectory
        self.port = port
        self.setup = setup
    }

    /// Stops the server if the test did not.
    deinit { stop() }

    /// Starts a server from a per-process template (made once with `initdb
    /// --no-sync`, then copied). Throws ``PostgresServerError`` with
    /// ``PostgresServerError/notInstalled`` set when PostgreSQL is not
    /// installed (tests skip then, unless the environment variable `CI` is
    /// "true"; in CI, an
    /// error saying how to install it).
    public static func start() throws -> PostgresServer {
        let setup = try Setup.shared()
        let directory = try makeDirectory(setup.root + "/server")
        if let owner = setup.owner { try chown(directory, owner) }
        let server = PostgresServer(socketDirectory: directory, port: 5432, setup: setup)
        do {
            try setup.run("/bin/cp", ["-a", setup.template, server.dataDirectory])
            try append("unix_socket_directories = '\(directory)'\nport = \(server.port)\n", to: server.dataDirectory + "/postgresql.conf")
            try server.launch()
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    /// The directory of PostgreSQL's programs (`psql`, `pg_dump`, `pg_restore`…) the server runs from.
    public var binDirectory: String { setup.bin }

    /// "postgres://USER@/DATABASE?host=SOCKETDIR&port=PORT", percent-encoded
    /// (the host's slashes are left as they are: legal in a query).
    public func url(user: String, database: String = "postgres") -> String {
        func encode(_ text: String, keeping extra: String = "") -> String {
            let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~" + extra)
            return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
        }
        return "postgres://\(encode(user))@/\(encode(database))?host=\(encode(socketDirectory, keeping: "/"))&port=\(port)"
    }

    /// Runs `sql` as a psql script (fed on stdin: statements one at a time,
    /// each in its own transaction unless the script says `BEGIN`, so `CREATE
    /// DATABASE` works too) with `psql -X -q -A -t -v ON_ERROR_STOP=1`, and
    /// returns its trimmed stdout (one line per row, `|` between columns).
    /// Throws an error carrying psql's stderr when it fails.
    @discardableResult
    public func psql(_ sql: String, as user: String = "postgres", database: String = "postgres") throws -> String {
        try setup.run(
            setup.bin + "/psql",
            [
                "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", socketDirectory, "-p", "\(port)", "-U", user, "-d", database, "-f",
                "-",
            ],
            input: sql
        ).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `CREATE ROLE name LOGIN`: an ordinary role (NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS).
    public func createRole(_ name: String) throws {
        try psql("CREATE ROLE \(Self.identifier(name)) LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS")
    }

    /// Stops the server as `pg_ctl stop -m mode` would ("smart", "fast", or
    /// "immediate": a crash, recovered at the next start) and starts it again
    /// on the same directory and socket.
    public func restart(mode: String = "fast") throws {
        let signals = ["smart": SIGTERM, "fast": SIGINT, "immediate": SIGQUIT]
        guard let signal = signals[mode] else { throw PostgresServerError(description: "unknown shutdown mode \(mode)") }
        try halt(signal)
        try launch()
    }

    /// A streaming standby of this server, in a directory of its own: a base
    /// backup (`pg_basebackup -R`, WAL streamed), started, replaying what this
    /// server commits from then on (asynchronously: a commit here is
    /// acknowledged before the standby has it).
    public func startStandby() throws -> PostgresServer {
        let directory = try Self.makeDirectory(setup.root + "/standby")
        if let owner = setup.owner { try Self.chown(directory, owner) }
        let standby = PostgresServer(socketDirectory: directory, port: port, setup: setup)
        do {
            try setup.run(
                setup.bin + "/pg_basebackup",
                [
                    "-h", socketDirectory, "-p", "\(port)", "-U", "postgres", "-D", standby.dataDirectory, "-X", "stream", "-R",
                    "--no-sync", "-c", "fast",
                ],
                asServer: true)
            try Self.append("unix_socket_directories = '\(directory)'\n", to: standby.dataDirectory + "/postgresql.conf")
            try standby.launch()
        } catch {
            standby.stop()
            throw error
        }
        return standby
    }

    /// Waits (60 s at most) until this standby has replayed everything
    /// `primary` has written so far.
    public func catchUp(with primary: PostgresServer) throws {
        let target = try primary.psql("SELECT pg_current_wal_lsn()")
        let deadline = Date().addingTimeInterval(60)
        while try psql("SELECT pg_last_wal_replay_lsn() >= '\(target)'::pg_lsn") != "t" {
            guard Date() < deadline else { throw PostgresServerError(description: "the standby did not replay up to \(target) in 60 s") }
            usleep(20_000)
        }
    }

    /// Stops this standby (a fast shutdown), so that what the primary commits
    /// from now on never reaches it.
    public func detach() throws { try halt(SIGINT) }

    /// The failover: `primary` crashes (an immediate shutdown: whatever it
    /// committed after this standby was detached is lost), and this standby
    /// starts on the socket clients connect to — `address`'s (`primary`'s when
    /// `nil`), so they reconnect to the same URL — streaming from nobody, and
    /// is promoted. Its own ``socketDirectory`` then names no socket: reach it
    /// as `address`. Stop it before `address`.
    public func takeOver(from primary: PostgresServer, address: PostgresServer? = nil) throws {
        let address = address ?? primary
        try primary.halt(SIGQUIT)
        try Self.append(
            "unix_socket_directories = '\(address.socketDirectory)'\nport = \(address.port)\n", to: dataDirectory + "/postgresql.conf")
        try Self.append("primary_conninfo = ''\n", to: dataDirectory + "/postgresql.auto.conf")
        try launch()
        guard try address.psql("SELECT pg_promote(true, 60)") == "t" else {
            throw PostgresServerError(description: "the standby was not promoted within 60 s")
        }
    }

    /// Terminates the backends of `user` (`pg_terminate_backend`, waiting up to
    /// 5 s for each to exit), to simulate dropped connections; returns how many.
    @discardableResult
    public func terminateBackends(of user: String) throws -> Int {
        let count = try psql(
            """
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity
            WHERE usename = \(Self.literal(user)) AND pid <> pg_backend_pid()
            """)
        return Int(count) ?? 0
    }

    /// Stops the server (immediately: its data is thrown away) and removes its
    /// directory. Idempotent; also called from `deinit`.
    public func stop() {
        let wasStopped = state.withLock { state in
            defer { state.stopped = true }
            return state.stopped
        }
        guard !wasStopped else { return }
        try? halt(SIGQUIT)
        try? FileManager.default.removeItem(atPath: socketDirectory)
    }

    // MARK: - Internals

    /// Starts the postmaster, its output appended to `server.log`, and waits
    /// until its `postmaster.pid` says "ready"; on failure, the error shows the log's end.
    private func launch() throws {
        let argv = setup.command(setup.bin + "/postgres", ["-D", dataDirectory], asServer: true)
        let pid = try Self.spawn(argv, stdio: ("/dev/null", logFile, logFile), directory: setup.root)
        Self.running.withLock { _ = $0.insert(pid) }
        state.withLock { $0.postmaster = pid }
        let pidFile = dataDirectory + "/postmaster.pid"
        do {
            let status = try Self.poll(pid, timeout: 60, what: "postgres start") {
                // Lines 1 and 8: the pid (not a stale file's) and the status.
                let lines = ((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").split(
                    separator: "\n", omittingEmptySubsequences: false)
                // "standby": a standby that accepts read-only connections.
                let status = lines.count >= 8 ? lines[7].trimmingCharacters(in: .whitespaces) : ""
                return lines.count >= 8 && lines[0] == "\(pid)" && (status == "ready" || status == "standby")
            }
            if let status { throw PostgresServerError(description: "postgres \(Self.describe(status))") }
        } catch {
            forget(pid)
            let tail = ((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "").split(separator: "\n").suffix(20).joined(
                separator: "\n")
            throw PostgresServerError(description: "\(error)\nlast lines of \(logFile):\n\(tail)")
        }
    }

    /// Sends `signal` to the postmaster (SIGTERM smart, SIGINT fast, SIGQUIT
    /// immediate shutdown) and waits until it has exited (after its backends).
    private func halt(_ signal: Int32) throws {
        guard let pid = state.withLock({ $0.postmaster }) else { return }
        kill(pid, signal)
        defer { forget(pid) }
        _ = try Self.poll(pid, timeout: 60, what: "postgres shutdown")
    }

    /// Notes that the postmaster `pid` is gone.
    private func forget(_ pid: pid_t) {
        Self.running.withLock { _ = $0.remove(pid) }
        state.withLock { $0.postmaster = nil }
    }

    /// The postmasters running, stopped at exit if a test leaked a server.
    private static let running = Mutex<Set<pid_t>>([])

    /// The per-process setup, made by the first `start()`: its outcome (a skip or an error too) is kept.
    private static let setupResult = Mutex<Result<Setup, any Error>?>(nil)

    /// Where the binaries are, the per-process directory and template, and who runs the server.
    private struct Setup: Sendable {
        /// The PostgreSQL binaries: `$GROUPSTORE_POSTGRES_BIN`, or Debian's
        /// newest (`/usr/lib/postgresql/<version>/bin`, 15 if none).
        let bin: String
        /// The per-process directory, in /dev/shm when it is a roomy tmpfs (a
        /// copy of the template's ~1000 files there takes 0.05 s, up to 0.7 s on
        /// a busy disk), else in /tmp; not in `$TMPDIR`: socket paths are limited to ~100 bytes.
        let root: String
        /// The template data directory, `root/template`.
        var template: String { root + "/template" }
        /// The `postgres` user's ids when we are root (the server then runs as it), else nil.
        let owner: (uid: uid_t, gid: gid_t)?

        /// The setup, made by the first caller while the others wait.
        static func shared() throws -> Setup {
            try PostgresServer.setupResult.withLock { result in
                if result == nil { result = Result { try make() } }
                return try result!.get()
            }
        }

        /// Finds PostgreSQL, makes the per-process directory and the template, and arranges the cleanup at exit.
        private static func make() throws -> Setup {
            let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap(Int.init)
            let bin =
                ProcessInfo.processInfo.environment["GROUPSTORE_POSTGRES_BIN"]
                ?? "/usr/lib/postgresql/\(versions.max() ?? 15)/bin"
            guard FileManager.default.isExecutableFile(atPath: bin + "/initdb") else {
                let message = "PostgreSQL is not installed (no \(bin)/initdb): apt-get install -y postgresql"
                throw PostgresServerError(description: message, notInstalled: true)
            }
            var owner: (uid: uid_t, gid: gid_t)?
            if getuid() == 0 {
                guard let user = getpwnam("postgres") else {
                    throw PostgresServerError(description: "running as root, but there is no `postgres` user to run the server")
                }
                owner = (user.pointee.pw_uid, user.pointee.pw_gid)
            }
            var shm = statvfs()
            let roomy =
                statvfs("/dev/shm", &shm) == 0 && UInt64(shm.f_bavail) * UInt64(shm.f_frsize) >= 1 << 30 && access("/dev/shm", W_OK) == 0
            let setup = Setup(
                bin: bin, root: try makeDirectory((roomy ? "/dev/shm" : "/tmp") + "/groupstore-postgres-\(getpid())"), owner: owner)
            do {
                guard mkdir(setup.template, 0o700) == 0 else {
                    throw PostgresServerError(description: "cannot make \(setup.template): errno \(errno)")
                }
                if let owner { try chown(setup.template, owner) }
                try setup.run(
                    bin + "/initdb",
                    [
                        "--no-sync", "--no-instructions", "-D", setup.template, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                        "--locale=C", "--wal-segsize=1",
                    ],
                    asServer: true)
                try append(
                    "listen_addresses = ''\nfsync = off\nfull_page_writes = off\nmax_connections = 300\n",
                    to: setup.template + "/postgresql.conf")
            } catch {
                try? FileManager.default.removeItem(atPath: setup.root)
                throw error
            }
            atexit { PostgresServer.cleanUpAtExit() }
            return setup
        }

        /// `executable` and `arguments`, behind `setpriv` to run as the `postgres` user when `asServer` and we are root.
        func command(_ executable: String, _ arguments: [String], asServer: Bool) -> [String] {
            (asServer && owner != nil ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] : [])
                + [executable] + arguments
        }

        /// Runs a command to its end (2 minutes at most) and returns its stdout;
        /// throws with its stderr when it fails.
        @discardableResult
        func run(_ executable: String, _ arguments: [String], input: String = "", asServer: Bool = false) throws -> String {
            let argv = command(executable, arguments, asServer: asServer)
            // Files, not pipes: no reader threads, and nothing to drain.
            let io = root + "/io-" + UUID().uuidString
            let (inPath, outPath, errPath) = (io + ".in", io + ".out", io + ".err")
            defer { for path in [inPath, outPath, errPath] { unlink(path) } }
            guard FileManager.default.createFile(atPath: inPath, contents: Data(input.utf8)) else {
                throw PostgresServerError(description: "cannot create \(inPath)")
            }
            let pid = try PostgresServer.spawn(argv, stdio: (inPath, outPath, errPath), directory: root)
            let what = "`" + argv.joined(separator: " ") + "`"
            guard let status = try PostgresServer.poll(pid, timeout: 120, what: what), status == 0 else {
                let errors = ((try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                throw PostgresServerError(description: "\(what) failed: \(errors)")
            }
            return (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        }
    }

    /// At exit: stops the servers a test leaked, and removes the per-process directory.
    private static func cleanUpAtExit() {
        let leaked = running.withLock { $0 }
        for pid in leaked { kill(pid, SIGQUIT) }
        for pid in leaked { _ = try? poll(pid, timeout: 10, what: "postgres shutdown") }
        if case .success(let setup) = setupResult.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: setup.root) }
    }

    /// Starts `argv` with `posix_spawn` in `directory`, its stdin read from
    /// `stdio.in` and its stdout and stderr appended to files, no other
    /// descriptor inherited, default signal dispositions and mask; its pid.
    ///
    /// Not Foundation's `Process`: on Linux it sees a child's exit only once
    /// every holder of a socket it hands the child has closed it, so a command
    /// that leaves a daemon behind (`pg_ctl start`) never "ends" for it.
    private static func spawn(_ argv: [String], stdio: (in: String, out: String, err: String), directory: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdio.in, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdio.out, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stdio.err, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // glibc 2.34 and 2.29 extensions that Swift's Glibc module leaves out (they need _GNU_SOURCE).
        typealias AddInt = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, CInt) -> CInt
        typealias AddPath = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> CInt
        if let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(closeFrom, to: AddInt.self)(&actions, 3)
        } else {
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for fd in open.compactMap({ CInt($0) }) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        if let chdir = dlsym(nil, "posix_spawn_file_actions_addchdir_np") {
            _ = unsafeBitCast(chdir, to: AddPath.self)(&actions, directory)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // No inherited PGHOST, PGUSER, PGOPTIONS...: the arguments say it all.
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") }.map { "\($0.key)=\($0.value)" }
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer { for pointer in cArgv + cEnvironment { free(pointer) } }
        var pid = pid_t()
        let error = posix_spawn(&pid, argv[0], &actions, &attributes, cArgv, cEnvironment)
        guard error == 0 else { throw PostgresServerError(description: "cannot start \(argv[0]): \(String(cString: strerror(error)))") }
        return pid
    }

    /// Polls the child `pid` every few milliseconds: its wait status once it
    /// has exited (and is reaped), or nil as soon as `done()` holds. After
    /// `timeout` seconds, kills it and throws.
    private static func poll(_ pid: pid_t, timeout: TimeInterval, what: String, until done: () -> Bool = { false }) throws -> Int32? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var pause: useconds_t = 200
        while true {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return status }
            if result == -1 && errno != EINTR { throw PostgresServerError(description: "\(what): waitpid failed, errno \(errno)") }
            if done() { return nil }
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw PostgresServerError(description: "\(what) timed out after \(Int(timeout)) s")
            }
            usleep(pause)
            pause = min(pause * 2, 2000)
        }
    }

    /// "exited with status N" or "was killed by signal N".
    private static func describe(_ status: Int32) -> String {
        status & 0x7f == 0 ? "exited with status \((status >> 8) & 0xff)" : "was killed by signal \(status & 0x7f)"
    }

    /// Makes a fresh directory `prefix.XXXXXX`, mode 0755 (traversable by the `postgres` user).
    private static func makeDirectory(_ prefix: String) throws -> String {
        var template = Array((prefix + ".XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!).map { String(cString: $0) } }
        guard let path, chmod(path, 0o755) == 0 else {
            throw PostgresServerError(description: "cannot make \(prefix).XXXXXX: errno \(errno)")
        }
        return path
    }

    /// Gives `path` to the `postgres` user.
    private static func chown(_ path: String, _ owner: (uid: uid_t, gid: gid_t)) throws {
        guard lchown(path, owner.uid, owner.gid) == 0 else {
            throw PostgresServerError(description: "cannot chown \(path): errno \(errno)")
        }
    }

    /// Appends `text` to a file (which keeps its owner and mode).
    private static func append(_ text: String, to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw PostgresServerError(description: "cannot open \(path)") }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// A quoted SQL identifier.
    private static func identifier(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// A quoted SQL string literal (standard_conforming_strings is on).
    private static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}

/// A failure to set up, run or talk to a ``PostgresServer``, with what the tools said.
public struct PostgresServerError: Error, CustomStringConvertible {
    public let description: String
    /// PostgreSQL's binaries are not there.
    public var notInstalled = false

    init(description: String, notInstalled: Bool = false) {
        self.description = description
        self.notInstalled = notInstalled
    }
}
