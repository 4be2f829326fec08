// swift-format-ignore-file
// Generated from README.md, snippet 1, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import Foundation
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
    let store: GroupStore
    do {
        store = try await GroupStore.open(configuration)
    } catch {
        FileHandle.standardError.write(Data("collector: \(error)\n".utf8))   // one line, naming the path, member or migration
        exit(1)
    }

    struct App: Service {
        let store: GroupStore
        let logger: Logger
        func run() async {
            // Every save of the other processes: first those made while this member was down, then live.
            // The loop ends when this service is shut down (SIGTERM, SIGINT).
            for await save in store.saves() {
                do {
                    print("seq \(save.seq) by \(save.author):", save.change(of: "job")?.inserted ?? [])
                    // Write as usual: the transaction is recorded and published to the group.
                    try await store.write { db in try db.execute(sql: "INSERT INTO sample(value) VALUES (?)", arguments: [save.seq]) }
                } catch {
                    // Not rethrown: the daemon would stop, and each restart would be handed this save again.
                    // It counts as processed when the loop asks for the next one ("Getting started": retries).
                    logger.error("save \(save.seq) not handled: \(error)")
                }
            }
        }
    }

    // The store and your services, in any order: on SIGTERM or SIGINT the store stops delivering,
    // each loop finishes the save in hand (and it counts), and services shut down after the store may still write.
    let group = ServiceGroup(
        configuration: .init(
            services: [App(store: store, logger: logger), store], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    do {
        try await group.run()
    } catch {
        FileHandle.standardError.write(Data("collector: \(error)\n".utf8))
        exit(1)
    }
}
