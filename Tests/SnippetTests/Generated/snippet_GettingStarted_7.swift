// swift-format-ignore-file
// Generated from Sources/GroupStore/Documentation.docc/GettingStarted.md, snippet 7, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GRDB
import GroupStore

func snippet_GettingStarted_7(configuration: GroupConfiguration) async throws {
    do {
        let store = try await GroupStore.open(configuration)
    } catch let error as GroupStoreError {
        if let database = error.underlying as? DatabaseError { print(database.resultCode) }
    }
}
