// swift-format-ignore-file
// Generated from Sources/GroupStoreCloud/Documentation.docc/SyncingWithARemote.md, snippet 1, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GRDB
import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import Logging
import ServiceLifecycle
import UnixSignals

func snippet_SyncingWithARemote_1(migrator: DatabaseMigrator) async throws {
    let logger = Logger(label: "notes")
    let directory = "/var/lib/notes/group"

    var storeConfiguration = GroupConfiguration(directory: directory, member: try MemberName("notes"), logger: logger)
    storeConfiguration.migrator = migrator   // your GRDB migrations
    let store = try await GroupStore.open(storeConfiguration)

    let remote = try EmbeddedRemote(path: "/srv/groupstore/cloud.sqlite", user: "alice", logger: logger)
    var syncConfiguration = CloudSyncConfiguration(group: directory, remote: remote, logger: logger)
    syncConfiguration.privateTables = ["note", "tag", "note_tag"]
    syncConfiguration.publicTables = ["recipe"]
    syncConfiguration.policy = .fieldMerge
    let bridge = CloudSync(syncConfiguration)

    // Subscribe before the bridge runs, to see its first events.
    let events = bridge.events()
    Task {
        for await event in events {
            if case .parked(let table, let record, let reason) = event {
                logger.warning("parked \(table)/\(record): \(reason)")
            }
        }
    }

    let group = ServiceGroup(
        configuration: .init(services: [store, remote, bridge], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}
