import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import Logging
import ServiceLifecycle
import Subprocesses
import XCTest

#if Postgres
    import GroupStoreCloudPostgres
    import PostgresTestServer
#endif
#if Gateway
    import GroupStoreCloudHTTP
    import GroupStoreGateway
#endif

/// Base of in-process bridge tests: a temporary folder holding group
/// directories ("hosts") and one remote they share: an in-memory one
/// (``MemoryRemote``, the engine tests' remote), an embedded one in a
/// subclass whose ``remoteKind`` is `.embedded`, or — where it is
/// `.postgres` — a throwaway PostgreSQL server, set up by its superuser,
/// with ordinary roles `alice`, `bob` and `carol` granted `groupstore_user`
/// (a superuser would bypass row-level security), or — where it is `.gateway`
/// — that server behind a `groupstore serve` process on loopback, logged in as
/// the role `authenticator` (granted those three), each remote a
/// ``GatewayRemote`` with a token for its user.
class CloudTestCase: XCTestCase {
    enum RemoteKind { case memory, embedded, postgres, gateway, memoryGateway }
    /// The remote ``defaultRemote(user:)`` gives: subclasses run the same
    /// tests against another remote by overriding it.
    class var remoteKind: RemoteKind { .memory }
    /// What this test's in-memory remotes share.
    let memoryServer = MemoryRemote.Server()

    var root = ""
    var remotePath: String { root + "/cloud.sqlite" }
    private var stores: [GroupStore] = []
    #if Postgres
        /// The PostgreSQL server, for `.postgres` and `.gateway`.
        var server: PostgresServer!
    #endif
    #if Gateway
        /// The gateway processes, for `.gateway` (one, started in `setUp`).
        var gateways: [GatewayProcess] = []
        /// The secret the gateways check tokens with.
        var gatewaySecret: GatewaySecret!
        /// The in-process gateway of `.memoryGateway`, and its port.
        private var memoryGateway: (group: ServiceGroup, task: Task<Void, Never>, port: Int)?
        /// The ports of the gateways, in order.
        var gatewayPorts: [Int] { memoryGateway.map { [$0.port] } ?? gateways.map(\.port) }
    #endif
    private var runningRemotes: [Task<Void, Never>] = []

    override func setUp() async throws {
        try await super.setUp()
        if Self.remoteKind == .memoryGateway {
            #if Gateway
                gatewaySecret = try GatewaySecret()
                let keys = try GatewayKeys(secretFiles: [gatewaySecret.path])
                let (ports, port) = AsyncStream.makeStream(of: Int.self)
                let gateway = GatewayServer(
                    configuration: GatewayConfiguration(host: "127.0.0.1", port: 0, keys: keys),
                    backend: MemoryGatewayBackend(server: memoryServer)
                ) { _, listening in port.yield(listening) }
                // In a service group, so that tearDown shuts it down gracefully (a cancelled server logs errors).
                let group = ServiceGroup(services: [gateway], logger: Logger(label: "memory-gateway"))
                let task = Task<Void, Never> { _ = try? await group.run() }
                var iterator = ports.makeAsyncIterator()
                guard let listening = await iterator.next() else { throw XCTSkip("the in-process gateway did not listen") }
                memoryGateway = (group, task, listening)
                return
            #else
                throw XCTSkip("built without the Gateway trait")
            #endif
        }
        guard Self.remoteKind == .postgres || Self.remoteKind == .gateway else { return }
        #if Postgres
            do {
                server = try PostgresServer.start()
            } catch let error as PostgresServerError where error.notInstalled && ProcessInfo.processInfo.environment["CI"] != "true" {
                throw XCTSkip(error.description)
            }
            _ = try await PostgresRemote.setup(url: server.url(user: "postgres"))
            for role in ["alice", "bob", "carol"] {
                try server.createRole(role)
                try server.psql("GRANT groupstore_user TO \(role)")
            }
        #endif
        guard Self.remoteKind == .gateway else { return }
        #if Gateway
            gatewaySecret = try GatewaySecret()
            try GatewayProcess.createAuthenticator(on: server, grantedRoles: ["alice", "bob", "carol"])
            gateways = [try GatewayProcess.start(server: server, secret: gatewaySecret)]
        #else
            throw XCTSkip("built without the Gateway trait")
        #endif
    }

    override func tearDown() async throws {
        for task in runningRemotes { task.cancel() }
        for task in runningRemotes { await task.value }
        runningRemotes = []
        #if Gateway
            for gateway in gateways {
                gateway.printIfFailed(self)
                gateway.stop()
            }
            gateways = []
            if let memoryGateway {
                await memoryGateway.group.triggerGracefulShutdown()
                await memoryGateway.task.value
            }
            memoryGateway = nil
            gatewaySecret?.remove()
        #endif
        #if Postgres
            server?.stop()
        #endif
        try await super.tearDown()
    }

    /// The remote of this class's kind, acting as `user`.
    func defaultRemote(user: String = "alice") throws -> any CloudDatabase {
        switch Self.remoteKind {
        case .memory: return remote(user: user)
        case .embedded: return try embeddedRemote(user: user)
        case .postgres:
            #if Postgres
                return try pgRemote(user: user)
            #else
                throw XCTSkip("built without the Postgres trait")
            #endif
        case .gateway, .memoryGateway:
            #if Gateway
                return try gatewayRemote(user: user)
            #else
                throw XCTSkip("built without the Gateway trait")
            #endif
        }
    }

    /// A private table `notes` (`id` and `title`, text), as the gateway tests use it.
    static let titledNotes = CloudRecordType(
        name: "notes", scope: .private,
        columns: [
            CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
            CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
        ])

    #if Gateway
        /// A running remote through the gateways (all of them, in order) with a
        /// token for `role` (its push connection ends with the test).
        func gatewayRemote(user role: String = "alice", token: String? = nil) throws -> GatewayRemote {
            let url = "http://" + gatewayPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",")
            let remote = try GatewayRemote(GatewayRemote.Configuration(url: url, token: try token ?? gatewaySecret.token(role: role)))
            runningRemotes.append(Task { try? await remote.run() })
            return remote
        }
    #endif

    #if Postgres
        /// A running PostgreSQL remote acting as `user` (its connections end with the test).
        func pgRemote(user: String = "alice") throws -> PostgresRemote {
            let remote = try PostgresRemote(url: server.url(user: user))
            runningRemotes.append(Task { try? await remote.run() })
            return remote
        }
    #endif

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("cloud-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        for store in stores { store.closeBlocking() }
        stores = []
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The directory of group (host) `name`.
    func group(_ name: String) -> String { root + "/" + name }

    /// Opens group `name` as an app member, running `schema` first (once).
    func open(_ name: String, member: String = "app", schema: String? = nil) throws -> GroupStore {
        var configuration = GroupConfiguration(directory: group(name), member: try MemberName(member))
        configuration.pruneInterval = nil
        if let schema {
            var migrator = DatabaseMigrator()
            migrator.registerMigration("schema") { db in try db.execute(sql: schema) }
            configuration.migrator = migrator
        }
        let store = try GroupStore(configuration)
        stores.append(store)
        return store
    }

    /// An in-memory remote acting as `user`, on this test's server.
    func remote(user: String = "alice", faults: RemoteFaults = .init()) -> MemoryRemote {
        MemoryRemote(user: user, server: memoryServer, faults: faults)
    }

    /// The embedded remote at ``remotePath`` acting as `user`, its push
    /// hints watched while the test runs.
    func embeddedRemote(user: String = "alice", faults: RemoteFaults = .init()) throws -> EmbeddedRemote {
        let remote = try EmbeddedRemote(path: remotePath, user: user, faults: faults)
        runningRemotes.append(Task { try? await remote.run() })
        return remote
    }

    func configuration(
        _ name: String, tables: [String], publicTables: [String] = [], policy: CloudConflictPolicy = .serverWins,
        remote: (any CloudDatabase)? = nil
    ) throws -> CloudSyncConfiguration {
        var configuration = CloudSyncConfiguration(group: group(name), remote: try remote ?? defaultRemote())
        configuration.privateTables = tables
        configuration.publicTables = publicTables
        configuration.policy = policy
        configuration.retryDelay = 0.01
        configuration.maxRetryDelay = 0.2
        return configuration
    }

    /// The remote acting as the schema's owner, who declares public and
    /// shared types on a PostgreSQL server (behind a gateway too: the owner
    /// logs in to the server itself). Any user on the other remotes.
    func ownerRemote() throws -> any CloudDatabase {
        switch Self.remoteKind {
        case .postgres, .gateway:
            #if Postgres
                return try pgRemote(user: "postgres")
            #else
                throw XCTSkip("built without the Postgres trait")
            #endif
        default: return try defaultRemote(user: "alice")
        }
    }

    /// Declares `types` as the schema's owner (``ownerRemote()``), as a
    /// deployment does before users sync public and shared tables.
    func declareAsOwner(_ types: [CloudRecordType]) async throws {
        try await ownerRemote().prepare(types)
    }

    /// Declares group `name`'s public and shared tables as the schema's
    /// owner (`groupstore cloud setup --group … --public-tables …`).
    func declareAsOwner(_ name: String, publicTables: [String], sharedTables: [String] = []) async throws {
        guard !publicTables.isEmpty || !sharedTables.isEmpty else { return }
        var configuration = try configuration(name, tables: [], publicTables: publicTables, remote: try ownerRemote())
        configuration.sharedTables = sharedTables
        _ = try await CloudSync.declareTables(configuration)
    }

    /// One sync of group `name`; fails the test if the sync reports an error.
    /// Its public tables are declared by the schema's owner first.
    @discardableResult
    func sync(
        _ name: String, tables: [String], publicTables: [String] = [], policy: CloudConflictPolicy = .serverWins,
        remote: (any CloudDatabase)? = nil, complete: Bool = false, file: StaticString = #filePath, line: UInt = #line
    ) async throws -> CloudSyncSummary {
        try await declareAsOwner(name, publicTables: publicTables)
        let sync = CloudSync(try configuration(name, tables: tables, publicTables: publicTables, policy: policy, remote: remote))
        let summary = try await sync.syncOnce(complete: complete)
        XCTAssertNil(summary.error, "sync of \(name) failed: \(summary.error ?? "")", file: file, line: line)
        return summary
    }

    /// Runs `sql` in group `name`'s database with the `sqlite3` shell (a
    /// writer outside the library; foreign keys off, its default).
    func shell(_ name: String, _ sql: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let process = try Subprocess(
            URL(fileURLWithPath: "/usr/bin/sqlite3"),
            ["-bail", "-cmd", ".timeout 10000", group(name) + "/store.sqlite", "BEGIN; \(sql); COMMIT;"])
        let status = process.waitForExit(timeout: 60)
        XCTAssertEqual(status, 0, "sqlite3 failed on \(sql): \(process.errors)", file: file, line: line)
    }

    /// Every row of `table` in group `name`, as text lines ordered by the first column.
    func dump(_ store: GroupStore, _ table: String) throws -> [String] {
        try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2").map { row in
                row.databaseValues.map { value -> String in
                    switch value.storage {
                    case .null: return "NULL"
                    case .int64(let integer): return "i:\(integer)"
                    case .double(let real): return "r:\(real)"
                    case .string(let text): return "t:\(text)"
                    case .blob(let data): return "b:\(data.count):\(data.hashValue)"
                    }
                }.joined(separator: "|")
            }
        }
    }

    /// `body`'s result, or a test failure naming `what` after `seconds`.
    func deadline<T: Sendable>(
        _ seconds: TimeInterval, _ what: String, _ body: @escaping @Sendable () async throws -> T?
    ) async throws -> T {
        let result = try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        guard let result else {
            XCTFail("timed out after \(seconds) s waiting for \(what)")
            throw CancellationError()
        }
        return result
    }
}
