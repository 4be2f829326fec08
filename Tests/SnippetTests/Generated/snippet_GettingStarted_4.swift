// swift-format-ignore-file
// Generated from Sources/GroupStore/Documentation.docc/GettingStarted.md, snippet 4, by SnippetTests: do not edit.
// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests

import GRDB
import GroupStore
import Logging

func snippet_GettingStarted_4(store: GroupStore, logger: Logger, handle: @Sendable (Save) async throws -> Void) async throws {
    for await save in store.saves() {
        for attempt in 1...3 {
            do {
                try await handle(save)
                break
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && attempt < 3 {
                try? await Task.sleep(for: .milliseconds(100 * attempt))   // transient: try again
            } catch {
                // Not rethrown: the save counts as processed once the loop asks for the next one.
                logger.error("save \(save.seq) not handled: \(error)")
                break
            }
        }
    }
}
