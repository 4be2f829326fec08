// swift-format-ignore-file
// Generated from Sources/GroupStoreCloud/Documentation.docc/SyncingWithARemote.md, snippet 2, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GroupStoreCloud

func snippet_SyncingWithARemote_2(syncConfiguration: CloudSyncConfiguration) async throws {
    do {
        let summary = try await CloudSync(syncConfiguration).syncOnce()
        print(summary)   // uploaded 2, fetched 1, conflicts 0, parked 0, pending 0
    } catch CloudSyncError.syncingElsewhere {
        print("another process syncs this group")
    }
}
