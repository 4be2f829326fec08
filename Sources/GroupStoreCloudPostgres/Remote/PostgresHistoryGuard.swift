#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO
    import Synchronization

    /// What a `modify` sends beside its statements so that the history is
    /// checked and read in its own transaction (``PostgresRemote/modify(_:keeping:)``):
    /// the mark's check first, the head last, and the head as answered.
    final class HistoryGuard: Sendable {
        /// The latest change the caller saw (`nil`: nothing to check).
        let mark: CloudHistoryMark?
        /// Names the remote in messages.
        let display: String
        /// The history after the last transaction that read it.
        private let head = Mutex<CloudRemoteHistory?>(nil)

        /// What the last transaction read of the history (`nil`: none read it).
        var answered: CloudRemoteHistory? { head.withLock { $0 } }

        init(mark: CloudHistoryMark?, display: String) {
            self.mark = mark
            self.display = display
        }

        /// Raises `GS010` (aborting the transaction) unless `mark` is part of the
        /// history: sent with the settings, before any change. Not after the
        /// changes (with the head, which would save a gateway a statement):
        /// there a mark past a restored server's head can fall among the
        /// transaction's own new entries, and after a failover the new primary
        /// may give this transaction the very id the mark's entry names.
        static func check(_ mark: CloudHistoryMark) -> PostgresTransaction.FirstRead {
            var binds = PostgresBindings()
            binds.append(mark.epoch)
            binds.append(String(mark.position))
            binds.append(mark.entry)
            return PostgresTransaction.FirstRead(function: "groupstore.require_history($1, $2::bigint, $3)", binds: binds, columns: 0)
        }

        /// The check of ``mark``, if there is one to check.
        var check: PostgresTransaction.FirstRead? { mark.map(Self.check) }

        /// The log's head as the transaction sees it (its own changes included).
        static let headQuery = historyRead(nil).query

        /// The history as a transaction sees it, and what it logs at `mark`'s
        /// position: a statement of its own (``PostgresRemote/history(keeping:)``),
        /// or sent with the settings of a listing's transaction, so that it takes
        /// the snapshot the page is read from (a feed's page reads it in the
        /// feed's statement instead).
        static func historyRead(_ mark: CloudHistoryMark?) -> PostgresTransaction.FirstRead {
            var binds = PostgresBindings()
            binds.append(String(mark?.position ?? 0))
            return PostgresTransaction.FirstRead(function: "groupstore.history($1::bigint)", binds: binds, columns: 6)
        }

        /// Keeps the answer of ``historyRead(_:)`` or ``headQuery``: after a write, the head it
        /// leaves (a transaction's own mark is part of the history it wrote);
        /// after a read, whether ``mark`` is kept.
        func read(_ rows: [[String?]], afterWrite: Bool = false) throws {
            let history = try PostgresRemote.history(rows.first, keeping: afterWrite ? nil : mark, display: display)
            head.withLock { $0 = history }
        }
    }
#endif  // Postgres
