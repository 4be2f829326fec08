// Generated from Sources/GroupStore/Documentation.docc/GettingStarted.md, snippet 2, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GroupStore
import Logging
import ServiceLifecycle
import UnixSignals

func snippet_GettingStarted_2(configuration: GroupConfiguration, logger: Logger) async throws {
    struct App: Service {
        let store: GroupStore

        func run() async throws {
            // Ends when this service is shut down (SIGTERM), whatever the order of the services.
            for await save in store.saves() {
                if save.kind == .resync { print("refetch everything"); continue }
                for change in save.changes {
                    if change.reset { print("refetch", change.entity); continue }   // created, dropped, renamed or altered
                    print(change.entity, change.inserted, change.updated, change.deleted)
                }
            }
        }
    }

    let store = try await GroupStore.open(configuration)
    let group = ServiceGroup(
        configuration: .init(services: [store, App(store: store)], gracefulShutdownSignals: [.sigterm], logger: logger))
    try await group.run()
}
