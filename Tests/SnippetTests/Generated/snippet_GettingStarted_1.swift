// swift-format-ignore-file
// Generated from Sources/GroupStore/Documentation.docc/GettingStarted.md, snippet 1, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GRDB
import GroupStore
import Logging

func snippet_GettingStarted_1(migrator: DatabaseMigrator, logger: Logger) async throws {
    var configuration = GroupConfiguration(directory: "/var/lib/myapp/group", member: try MemberName("collector"), logger: logger)
    configuration.migrator = migrator
    configuration.inScopeEntityNames = ["sample"]   // the tables whose saves you want; nil for all
    let store = try await GroupStore.open(configuration)
}
