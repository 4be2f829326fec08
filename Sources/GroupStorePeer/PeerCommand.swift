import ArgumentParser
import Dispatch
import Foundation
import GRDB
import GroupStore
import Logging
import Synchronization

/// `groupstore-peer`: a member that writes rows and prints what it receives.
///
/// Drives the multi-process tests and benchmarks. It creates
/// `items(id INTEGER PRIMARY KEY, author TEXT, n INTEGER)`, prints each
/// delivered save as one JSON line on stdout, and reports progress on stderr
/// (`ready`, `wrote N`).
@main
struct PeerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groupstore-peer",
        abstract: "A scriptable group member: writes rows into `items` and prints delivered saves as JSON lines."
    )

    @Option(help: "The group directory.") var group: String
    @Option(help: "This member's name.") var member: String
    @Option(help: "Rows to insert, one transaction each.") var writes = 0
    @Option(help: "Pause between writes, in microseconds.") var intervalUs = 0
    @Option(help: "Exit after this many saves from others were delivered.") var expect: Int?
    @Flag(help: "Wait for a line on stdin before writing.") var waitForGo = false
    @Flag(help: "Stop writing (and keep receiving) when a line 'stop' arrives on stdin.") var stopOnStdin = false
    @Option(help: "Only saves touching these entities (comma-separated).") var entities: String?
    @Option(help: "Log level on stderr.") var logLevel: String = "info"
    @Option(help: "One more migration after the peer's own, as NAME=SQL (to see a failing one reported).")
    var extraMigration: String?
    @Option(
        help: """
            Run as a daemon instead: the store and an app service in one ServiceGroup, in this order \
            (store-first or app-first); the app reads the database (an await) before it subscribes, prints \
            each save, and stops on SIGTERM.
            """)
    var serviceOrder: DaemonMode.Order?
    @Flag(help: "As a daemon, the app also writes a row every millisecond until SIGTERM (reported on stderr).")
    var daemonWrites = false
    @Flag(help: "As a daemon, leave the store out of the ServiceGroup (its subscription starts it).")
    var storeNotRun = false
    @Flag(help: "As a daemon, also observe .groupStoreDidSave on the main queue (reported on stderr).")
    var observeOnMain = false
    @Option(help: "As a daemon, the app works this many milliseconds on each save (reported on stderr).")
    var handlerMs = 0
    @Option(help: "As a daemon, the app's handling throws for saves by this author (logged, not rethrown).")
    var failingAuthor: String?
    @Option(
        help: """
            Only observe .groupStoreDidSave on the main queue (reported on stderr), the store never-started, \
            started with the main thread asleep (main-blocked), or started.
            """)
    var observeOnly: ObserverMode.Setup?

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            return handler
        }
        var configuration = GroupConfiguration(
            directory: group, member: try MemberName(member), logger: Logger(label: "groupstore-peer"))
        var migrator = Self.migrator
        if let extraMigration {
            guard let equals = extraMigration.firstIndex(of: "=") else { throw ValidationError("--extra-migration takes NAME=SQL") }
            let sql = String(extraMigration[extraMigration.index(after: equals)...])
            migrator.registerMigration(String(extraMigration[..<equals])) { db in try db.execute(sql: sql) }
        }
        configuration.migrator = migrator
        if let entities { configuration.inScopeEntityNames = Set(entities.split(separator: ",").map(String.init)) }
        let store = try await GroupStore.open(configuration)
        if let serviceOrder {
            try await DaemonMode.run(
                store: store, order: serviceOrder, runStore: !storeNotRun, writes: daemonWrites, observeOnMain: observeOnMain,
                handling: .init(milliseconds: handlerMs, failingAuthor: failingAuthor), logger: configuration.logger)
            return
        }
        if let observeOnly {
            try await ObserverMode.run(store: store, setup: observeOnly)
            return
        }
        let saves = store.saves()
        try await store.start()

        // Ends the run: a signal, or (writes done and expected saves seen).
        let stop = DispatchSemaphore(value: 0)
        let progress = Progress(writing: writes > 0, expecting: expect != nil) { stop.signal() }
        let signals = Self.onTermination { stop.signal() }
        Self.report("ready cursor=\(store.cursor)")
        let (writes, intervalUs, waitForGo, member) = (writes, intervalUs, waitForGo, member)
        let stopWriting = Atomic<Bool>(false)
        let stopOnStdin = self.stopOnStdin
        // Writes run on their own thread: the synchronous writes block it, not the concurrency pool.
        let writer = Thread {
            if waitForGo { _ = readLine() }
            if stopOnStdin {
                // Started after "go", so the two never read the same line.
                Thread {
                    while let line = readLine(), line != "stop" {}
                    stopWriting.store(true, ordering: .releasing)
                }.start()
            }
            do {
                var written = 0
                for n in 0..<writes {
                    if stopWriting.load(ordering: .acquiring) { break }
                    written += 1
                    try store.writeBlocking { db in
                        try db.execute(sql: "INSERT INTO items(author, n) VALUES (?, ?)", arguments: [member, n])
                    }
                    if intervalUs > 0 { usleep(UInt32(intervalUs)) }
                }
                store.flushPublicationsBlocking()
                Self.report("wrote \(written)")
            } catch {
                Self.report("write failed: \(error)")
            }
            progress.writesDone()
        }
        writer.start()

        let expect = self.expect
        let reader = Task {
            var received = 0
            for await save in saves {
                FileHandle.standardOutput.write(Data((save.jsonLine(receivedAt: Date()) + "\n").utf8))
                received += 1
                if let expect, received == expect {
                    Self.report("received \(received)")
                    progress.expectedReceived()
                }
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                stop.wait()
                continuation.resume()
            }
        }
        // The signal sources must live until here.
        withExtendedLifetime(signals) {}
        await store.close()
        await reader.value
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("items") { db in
            try db.execute(
                sql: "CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, author TEXT NOT NULL, n INTEGER NOT NULL)")
        }
        return migrator
    }

    static func report(_ line: String) {
        FileHandle.standardError.write(Data("peer: \(line)\n".utf8))
    }

    /// Calls `handler` on SIGTERM or SIGINT.
    static func onTermination(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler(handler: handler)
            source.activate()
            return source
        }
    }
}

/// Signals once both the writes and the expected deliveries are done (each
/// counts as done when not asked for); with neither, only a signal ends the run.
final class Progress: Sendable {
    private let state: Mutex<(writing: Bool, expecting: Bool)>
    private let done: @Sendable () -> Void

    init(writing: Bool, expecting: Bool, done: @escaping @Sendable () -> Void) {
        state = Mutex((writing, expecting))
        self.done = done
    }

    func writesDone() { update { $0.writing = false } }
    func expectedReceived() { update { $0.expecting = false } }

    private func update(_ change: (inout (writing: Bool, expecting: Bool)) -> Void) {
        let finished = state.withLock { state -> Bool in
            let wasRunning = state.writing || state.expecting
            change(&state)
            return wasRunning && !state.writing && !state.expecting
        }
        if finished { done() }
    }
}
