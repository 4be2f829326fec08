import Synchronization

/// This process's own commits through the library, and the one rule about
/// them: **a member is never delivered its own saves, and its own commits
/// never make it skip a peer's.**
///
/// - Each write, once committed, is noted here (any thread), with the newest
///   transaction when its write began (``Payload/previous``).
/// - At its next merge the member passes the noted commits that follow its
///   cursor *directly* (``pass(from:)``): nothing of a peer can lie between
///   the cursor and such a commit, so the cursor moves past it without
///   reading it back (the common case, a member that writes and follows).
/// - Any other is read with the history like a peer's transaction (its
///   changes not folded: ``HistoryReader``'s `skippingAuthor`), and then
///   not delivered, its author being this member (``Save/delivered(to:scope:)``);
///   the peers' transactions read around it are.
///
/// The delivery (``Delivery``) owns one and asks it at each merge.
final class OwnCommits: Sendable {
    /// The most commits kept noted between two merges; past it, they are read instead.
    static let limit = 1024

    private struct State {
        /// Noted, not passed or read yet, in commit order.
        var pending: [Payload] = []
        /// The newest noted ever (since the last resync).
        var newest: Int64 = 0
    }

    private let state = Mutex(State())

    /// This process committed `payload`'s transaction.
    func note(_ payload: Payload) {
        state.withLock { state in
            // A backlog the merges have not taken is read instead.
            if state.pending.count < Self.limit { state.pending.append(payload) }
            state.newest = max(state.newest, payload.seq)
        }
    }

    /// The newest commit of this process (0: none since the last resync).
    var newest: Int64 { state.withLock { $0.newest } }

    /// Takes the noted commits and returns those that follow `cursor`
    /// directly, one after the other, in sequence order: the cursor may pass
    /// them unread. The others are forgotten here (the history reads them).
    func pass(from cursor: Int64) -> [Payload] {
        let pending = state.withLock { state in
            defer { state.pending = [] }
            return state.pending
        }
        var position = cursor
        var passed: [Payload] = []
        for payload in pending.sorted(by: { $0.seq < $1.seq }) where payload.previous == position {
            passed.append(payload)
            position = payload.seq
        }
        return passed
    }

    /// Another history (a resync): the commits noted are not in it.
    func forget() {
        state.withLock { $0 = State() }
    }
}
