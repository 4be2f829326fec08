// swift-format-ignore-file
// Generated from Sources/GroupStore/Documentation.docc/GettingStarted.md, snippet 3, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GroupStore

func snippet_GettingStarted_3(configuration: GroupConfiguration) async throws {
    let store = try await GroupStore.open(configuration)
    let saves = store.saves()
    try await store.start()
    for await save in saves {
        print(save.seq, save.author)
        if save.author == "producer" { break }
    }
    await store.close()
}
