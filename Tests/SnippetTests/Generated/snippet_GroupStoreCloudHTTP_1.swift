// swift-format-ignore-file
// Generated from Sources/GroupStoreCloudHTTP/Documentation.docc/GroupStoreCloudHTTP.md, snippet 1, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests
#if Gateway

import Foundation
import GroupStore
import GroupStoreCloud
import GroupStoreCloudHTTP
import Logging
import ServiceLifecycle

func snippet_GroupStoreCloudHTTP_1(store: GroupStore, logger: Logger) async throws {
    let token = try String(contentsOfFile: "/etc/myapp/groupstore.token", encoding: .utf8)
        .trimmingCharacters(in: .whitespacesAndNewlines)
    var gateway = GatewayRemote.Configuration(url: "https://sync.example.com:8443", token: token)
    gateway.tokenFile = "/etc/myapp/groupstore.token"
    let remote = try GatewayRemote(gateway, logger: logger)
    var sync = CloudSyncConfiguration(group: "/var/lib/myapp/group", remote: remote, logger: logger)
    sync.privateTables = ["note", "tag"]
    try await ServiceGroup(services: [store, remote, CloudSync(sync)], logger: logger).run()
}
#endif  // Gateway
