import Foundation
import GRDB
import GroupStore

/// The history after the intake position, read as ``Save``s: by a one-shot
/// sync (`groupstore cloud sync`), whose store is never started, so nothing
/// is delivered to it, a page at a time; and by an upload that finds local
/// commits its intake has not taken in yet (delivery is behind the upload),
/// only to date their edits. A running bridge otherwise takes in what its
/// member's saves stream delivers. A history pruned past the position reads
/// as a resync.
struct HistoryBacklog: Sendable {
    let store: GroupStore
    /// Transactions read per page.
    static let pageSize = 512

    /// The next page after `position`: its saves (every author's; the
    /// intake skips the bridge's own), and whether more follow.
    func page(after position: Int64, in db: Database) throws -> (saves: [Save], hasMore: Bool) {
        let page = try store.historyIntake(db, after: position, limit: Self.pageSize)
        if page.prunedThrough > position {
            let resync = Save(kind: .resync, seq: page.prunedThrough, author: Save.externalAuthor, committedAt: Date(), changes: [])
            return ([resync], true)
        }
        return (page.saves, page.hasMore)
    }
}
