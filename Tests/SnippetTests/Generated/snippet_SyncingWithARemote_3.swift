// swift-format-ignore-file
// Generated from Sources/GroupStoreCloud/Documentation.docc/SyncingWithARemote.md, snippet 3, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GroupStoreCloud

func snippet_SyncingWithARemote_3(remote: any CloudDatabase) async throws {
    try await remote.share("family", with: "bob", access: .readWrite)
    try await remote.share("family", with: "carol", access: .readOnly)
    try await remote.share("family", with: "bob", access: nil)   // no longer
}
