import ArgumentParser
import Foundation
import GRDB
import GroupStore
import Logging
import ServiceLifecycle
import UnixSignals

/// `groupstore-peer --service-order …`: the README's daemon pattern, for the
/// lifecycle tests. The store and an app service run in one `ServiceGroup`;
/// the app awaits a read before it subscribes (the habit that used to lose
/// the saves committed while the member was down).
enum DaemonMode {
    enum Order: String, ExpressibleByArgument, Sendable {
        case storeFirst = "store-first"
        case appFirst = "app-first"
    }

    /// - Parameter runStore: put the store in the `ServiceGroup` (else only
    ///   the app runs, and its subscription starts the store).
    /// - Parameter writes: the app also writes a row every millisecond until
    ///   its own graceful shutdown, reporting each committed one.
    /// - Parameter observeOnMain: also observe `.groupStoreDidSave` on the
    ///   main queue (the CDShare habit), from this async top level.
    /// - Parameter handling: what the app does with each save after printing it.
    static func run(
        store: GroupStore, order: Order, runStore: Bool = true, writes: Bool = false, observeOnMain: Bool = false,
        handling: Handling = Handling(), logger: Logger
    ) async throws {
        // The main queue runs while this top-level code is suspended in `group.run()` below.
        let observer =
            observeOnMain
            ? NotificationCenter.default.addObserver(forName: .groupStoreDidSave, object: store, queue: .main) { note in
                if let save = note.userInfo?[GroupStore.saveUserInfoKey] as? Save { PeerCommand.report("main observer seq \(save.seq)") }
            } : nil
        defer { observer.map(NotificationCenter.default.removeObserver) }
        let app = AppService(store: store, writes: writes, handling: handling)
        let services: [any Service] = !runStore ? [app] : order == .storeFirst ? [store, app] : [app, store]
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        PeerCommand.report("stopped cursor=\(store.cursor)")
        // As the README's daemon ends: its store is a top-level constant,
        // never released (its deinit would close it and write the cursor).
        exit(0)
    }

    /// The app's work on each save: it takes `milliseconds` (reported on
    /// stderr when it begins and ends), and fails for saves by
    /// `failingAuthor`, handled as the README's pattern for a save whose
    /// handling throws (logged, not rethrown).
    struct Handling: Sendable {
        var milliseconds = 0
        var failingAuthor: String?

        func handle(_ save: Save) async throws {
            guard milliseconds > 0 || failingAuthor != nil else { return }
            PeerCommand.report("handling seq \(save.seq)")
            if save.author == failingAuthor { throw PoisonSave(seq: save.seq) }
            try? await Task.sleep(for: .milliseconds(milliseconds))
            PeerCommand.report("handled seq \(save.seq)")
        }
    }

    struct PoisonSave: Error, CustomStringConvertible {
        let seq: Int64
        var description: String { "save \(seq) cannot be handled" }
    }

    struct AppService: Service {
        let store: GroupStore
        let writes: Bool
        let handling: Handling

        func run() async throws {
            let rows = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0 }
            PeerCommand.report("daemon ready rows=\(rows)")
            let store = self.store
            // The natural loop: write until this service is told to stop.
            async let written: Int = writes ? Self.writeUntilShutdown(store) : 0
            for await save in store.saves() {
                FileHandle.standardOutput.write(Data((save.jsonLine(receivedAt: Date()) + "\n").utf8))
                do {
                    try await handling.handle(save)
                } catch {
                    // Not rethrown: the daemon would stop, and each restart would get this save again.
                    PeerCommand.report("save \(save.seq) not handled: \(error)")
                }
            }
            let count = try await written
            if writes { PeerCommand.report("daemon wrote \(count)") }
        }

        private static func writeUntilShutdown(_ store: GroupStore) async throws -> Int {
            var count = 0
            while !Task.isShuttingDownGracefully {
                let n = count
                let id = try await store.write { db in
                    try db.execute(sql: "INSERT INTO items(author, n) VALUES ('daemon', ?)", arguments: [n])
                    return db.lastInsertedRowID
                }
                count += 1
                PeerCommand.report("daemon committed \(id)")
                try? await Task.sleep(for: .milliseconds(1))
            }
            return count
        }
    }
}
