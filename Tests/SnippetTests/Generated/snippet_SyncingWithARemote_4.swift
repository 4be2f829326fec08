// swift-format-ignore-file
// Generated from Sources/GroupStoreCloud/Documentation.docc/SyncingWithARemote.md, snippet 4, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GroupStoreCloud

func snippet_SyncingWithARemote_4(syncConfiguration: inout CloudSyncConfiguration) async throws {
    syncConfiguration.policy = .custom { conflict in
        guard let server = conflict.server, let client = conflict.client else { return .server }
        var merged = server
        merged["title"] = client["title"]   // this group's title, the remote's everything else
        return .fields(merged)
    }
}
