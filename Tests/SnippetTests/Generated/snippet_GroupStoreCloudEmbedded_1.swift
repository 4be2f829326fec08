// swift-format-ignore-file
// Generated from Sources/GroupStoreCloudEmbedded/Documentation.docc/GroupStoreCloudEmbedded.md, snippet 1, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import Logging
import ServiceLifecycle

func snippet_GroupStoreCloudEmbedded_1(store: GroupStore, logger: Logger) async throws {
    let remote = try EmbeddedRemote(path: "/srv/groupstore/cloud.sqlite", user: "alice")
    let sync = CloudSync(CloudSyncConfiguration(group: "/var/lib/notes/group", remote: remote))
    try await ServiceGroup(services: [store, remote, sync], logger: logger).run()
}
