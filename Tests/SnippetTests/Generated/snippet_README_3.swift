// swift-format-ignore-file
// Generated from README.md, snippet 3, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import Foundation
import GroupStore
import GroupStoreCloud
import GroupStoreCloudEmbedded
import Logging
import ServiceLifecycle
import UnixSignals

func snippet_README_3(store: GroupStore, logger: Logger) async throws {
    let remote: EmbeddedRemote
    do { remote = try EmbeddedRemote(path: "/srv/myapp/cloud.sqlite", user: "alice") } catch {
        FileHandle.standardError.write(Data("collector: \(error)\n".utf8)); exit(1)   // one line, naming the remote
    }
    var sync = CloudSyncConfiguration(group: store.directoryPath, remote: remote)
    sync.privateTables = ["note", "tag", "note_tag"]     // only alice's hosts see these
    sync.publicTables = ["board"]                         // everyone reads, the creator writes
    sync.policy = .fieldMerge                             // or .serverWins (default), .clientWins, .newerWins, .custom { … }
    let bridge = CloudSync(sync)                          // joins as the member "cloud"; a second process stands by
    let events = Task { for await event in bridge.events() { logger.info("\(event)") } }
    let services: [any Service] = [store, remote, bridge]
    do { try await ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run() }
    catch { FileHandle.standardError.write(Data("collector: \(error)\n".utf8)); exit(1) }
    events.cancel()
}
