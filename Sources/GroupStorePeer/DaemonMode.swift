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

    static func run(store: GroupStore, order: Order, logger: Logger) async throws {
        let app = AppService(store: store)
        let services: [any Service] = order == .storeFirst ? [store, app] : [app, store]
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        PeerCommand.report("stopped cursor=\(store.cursor)")
    }

    struct AppService: Service {
        let store: GroupStore

        func run() async throws {
            let rows = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0 }
            PeerCommand.report("daemon ready rows=\(rows)")
            for await save in store.saves() {
                FileHandle.standardOutput.write(Data((save.jsonLine(receivedAt: Date()) + "\n").utf8))
            }
        }
    }
}
