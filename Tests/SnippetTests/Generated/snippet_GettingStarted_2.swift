// swift-format-ignore-file
// Generated from Sources/GroupStore/Documentation.docc/GettingStarted.md, snippet 2, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import Foundation
import GroupStore
import Logging
import ServiceLifecycle
import UnixSignals

func snippet_GettingStarted_2(configuration: GroupConfiguration, logger: Logger) async throws {
    struct App: Service {
        let store: GroupStore

        func run() async {
            // Ends when this service is shut down (SIGTERM, SIGINT), whatever the order of the services.
            for await save in store.saves() {
                if save.kind == .resync { print("refetch everything"); continue }
                for change in save.changes {
                    if change.reset { print("refetch", change.entity); continue }   // created, dropped, renamed or altered
                    print(change.entity, change.inserted, change.updated, change.deleted)
                }
            }
        }
    }

    let store: GroupStore
    do {
        store = try await GroupStore.open(configuration)
    } catch {
        FileHandle.standardError.write(Data("app: \(error)\n".utf8))   // one line, naming the path, member or migration
        exit(1)
    }
    let group = ServiceGroup(
        configuration: .init(services: [store, App(store: store)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}
