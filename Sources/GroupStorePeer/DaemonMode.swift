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
    static func run(
        store: GroupStore, order: Order, runStore: Bool = true, writes: Bool = false, observeOnMain: Bool = false, logger: Logger
    ) async throws {
        // The main queue runs while this top-level code is suspended in `group.run()` below.
        let observer =
            observeOnMain
            ? NotificationCenter.default.addObserver(forName: .groupStoreDidSave, object: store, queue: .main) { note in
                if let save = note.userInfo?[GroupStore.saveUserInfoKey] as? Save { PeerCommand.report("main observer seq \(save.seq)") }
            } : nil
        defer { observer.map(NotificationCenter.default.removeObserver) }
        let app = AppService(store: store, writes: writes)
        let services: [any Service] = !runStore ? [app] : order == .storeFirst ? [store, app] : [app, store]
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        PeerCommand.report("stopped cursor=\(store.cursor)")
    }

    struct AppService: Service {
        let store: GroupStore
        let writes: Bool

        func run() async throws {
            let rows = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0 }
            PeerCommand.report("daemon ready rows=\(rows)")
            let store = self.store
            // The natural loop: write until this service is told to stop.
            async let written: Int = writes ? Self.writeUntilShutdown(store) : 0
            for await save in store.saves() {
                FileHandle.standardOutput.write(Data((save.jsonLine(receivedAt: Date()) + "\n").utf8))
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
