// swift-format-ignore-file
// Generated from Sources/GroupStore/Documentation.docc/GettingStarted.md, snippet 6, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GRDB
import GroupStore

func snippet_GettingStarted_6(store: GroupStore) async throws {
    let count = ValueObservation.tracking { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sample") }
    for try await value in count.values(in: store.pool) { print(value ?? 0) }
}
