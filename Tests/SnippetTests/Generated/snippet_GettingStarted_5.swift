// swift-format-ignore-file
// Generated from Sources/GroupStore/Documentation.docc/GettingStarted.md, snippet 5, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GRDB
import GroupStore

func snippet_GettingStarted_5(store: GroupStore) async throws {
    try await store.write { db in
        try db.execute(sql: "INSERT INTO sample(value) VALUES (?)", arguments: [42])
    }
}
