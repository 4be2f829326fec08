// swift-format-ignore-file
// Generated from README.md, snippet 2, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GRDB
import GroupStore

func snippet_README_2(store: GroupStore) async throws {
    let jobs = ValueObservation.tracking { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM job") }
    for try await count in jobs.values(in: store.pool) { print("jobs:", count ?? 0) }
}
