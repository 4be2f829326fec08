// Generated from README.md, snippet 1, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GRDB
import GroupStore
import Logging
import ServiceLifecycle
import UnixSignals

func snippet_README_1(migrator: DatabaseMigrator) async throws {
    let logger = Logger(label: "collector")
    var configuration = GroupConfiguration(directory: "/var/lib/myapp/group", member: try MemberName("collector"), logger: logger)
    configuration.migrator = migrator                    // your GRDB migrations
    configuration.inScopeEntityNames = ["job", "sample"] // the tables whose saves you want (nil: all)
    let store = try await GroupStore.open(configuration)

    struct App: Service {
        let store: GroupStore
        func run() async throws {
            // Every save of the other processes: first those made while this member was down, then live.
            // The loop ends when this service is shut down (SIGTERM).
            for await save in store.saves() {
                print("seq \(save.seq) by \(save.author):", save.change(of: "job")?.inserted ?? [])
                // Write as usual: the transaction is recorded and published to the group.
                try await store.write { db in try db.execute(sql: "INSERT INTO sample(value) VALUES (?)", arguments: [save.seq]) }
            }
        }
    }

    // The store and your services, in any order: on SIGTERM the store stops
    // delivering and saves its cursor; services shut down after it may still write.
    let group = ServiceGroup(configuration: .init(services: [App(store: store), store], gracefulShutdownSignals: [.sigterm], logger: logger))
    try await group.run()
}
