#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO
    import Synchronization

    /// What a `modify` sends beside its statements so that the history is
    /// checked and read in its own transaction (``PostgresRemote/modify(_:keeping:)``):
    /// the mark's check and the head, after the writes, and the head as answered.
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

        /// The log's head as the transaction sees it (its own changes
        /// included), read after a write's statements; with a ``mark``, in the
        /// same statement, `groupstore.require_history`, which raises `GS010`
        /// unless the mark is part of the history: the transaction then
        /// aborts, and nothing it wrote commits. Checked after the writes, not
        /// before them, so that the check costs no statement of its own:
        /// acting as a role (a gateway), a statement before the role is taken
        /// may not call it.
        var headQuery: PostgresQuery {
            guard let mark else { return Self.historyRead(nil).query }
            var binds = PostgresBindings()
            binds.append(mark.epoch)
            binds.append(String(mark.position))
            binds.append(mark.entry)
            return PostgresQuery(
                unsafeSQL: "SELECT h.* FROM groupstore.require_history($1, $2::bigint, $3) AS c, groupstore.history(0) AS h", binds: binds)
        }

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
