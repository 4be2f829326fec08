import Foundation
import GRDB

/// Reads deliverable saves from the history for a subscriber that fell
/// behind the in-memory buffer of the ``SaveFeed``.
struct HistoryPageReader: Sendable {
    static let pageSize = 512

    let pool: DatabasePool
    let member: MemberName
    let scope: EntityNameSet?

    func page(after: Int64, through: Int64) async -> SaveFeed.HistoryPage? {
        do {
            return try await pool.read { db in try read(db, after: after, through: through) }
        } catch {
            return nil
        }
    }

    private func read(_ db: Database, after: Int64, through: Int64) throws -> SaveFeed.HistoryPage {
        var names = try TableNames.load(db)
        let batch = try HistoryReader.read(db, after: after, limit: Self.pageSize, names: &names, skippingAuthor: member.rawValue)
        if batch.prunedThrough > after {
            // Pruned since: the subscriber can only resync.
            let resync = Save(
                kind: .resync, seq: min(batch.prunedThrough, through), author: Save.externalAuthor, committedAt: Date(), changes: [])
            return SaveFeed.HistoryPage(saves: [resync], through: resync.seq)
        }
        let inRange = batch.saves.filter { $0.seq <= through }
        let saves = inRange.compactMap { $0.delivered(to: member, scope: scope) }
        // Nothing more in the history (a reset one): the range is done.
        let reached = batch.saves.isEmpty || !batch.hasMore ? through : (inRange.last?.seq ?? through)
        return SaveFeed.HistoryPage(saves: saves, through: reached)
    }
}
