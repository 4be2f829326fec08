// swift-format-ignore-file
// Generated from Sources/GroupStoreCloudPostgres/Documentation.docc/GroupStoreCloudPostgres.md, snippet 1, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests
#if Postgres

import GroupStore
import GroupStoreCloud
import GroupStoreCloudPostgres
import Logging
import ServiceLifecycle

func snippet_GroupStoreCloudPostgres_1(store: GroupStore, logger: Logger) async throws {
    let remote = try PostgresRemote(url: "postgres://alice@db.example.com/app?sslmode=verify-full", logger: logger)
    var sync = CloudSyncConfiguration(group: "/var/lib/myapp/group", remote: remote, logger: logger)
    sync.privateTables = ["note", "tag"]
    try await ServiceGroup(services: [store, remote, CloudSync(sync)], logger: logger).run()
}
#endif  // Postgres
