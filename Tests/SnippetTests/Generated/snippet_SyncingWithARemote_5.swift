// swift-format-ignore-file
// Generated from Sources/GroupStoreCloud/Documentation.docc/SyncingWithARemote.md, snippet 5, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GroupStoreCloud

func snippet_SyncingWithARemote_5(directory: String) async throws {
    let server = MemoryRemote.Server()
    let faults = RemoteFaults()
    faults.failNext(3)
    var configuration = CloudSyncConfiguration(group: directory, remote: MemoryRemote(user: "alice", server: server, faults: faults))
    configuration.privateTables = ["note"]
    let summary = try await CloudSync(configuration).syncOnce()
}
