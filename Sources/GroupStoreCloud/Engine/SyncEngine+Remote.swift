import Foundation
import GRDB
import Logging

extension SyncEngine {
    /// Asks the remote whether the latest change this group saw of its
    /// history is still part of it: before the first sync, and after a
    /// remote was found reset. A remote of another epoch was replaced by a
    /// fresh one (or set up again); one that no longer logs that change was
    /// restored from an older copy. Either way the group and the remote are
    /// brought to one state (``reset(_:seen:now:)``) before anything is
    /// uploaded: a change uploaded on top of tags the remote never issued
    /// would be taken for a conflict, or refused.
    ///
    /// Every other sync has the mark checked by the calls themselves, in the
    /// remote's own transaction (``CloudDatabase/fetchChanges(in:since:limit:keeping:)``,
    /// ``CloudDatabase/modify(_:keeping:)``; see ``take(_:askedAt:)``).
    /// - Returns: whether the remote was found replaced or restored.
    @discardableResult
    func checkRemoteHistory() async throws -> Bool {
        try await callKeepingMark("read the history of \(remote.displayName)", history: { $0 }) {
            try await self.remote.history(keeping: $0)
        }.reset
    }

    /// `call` made with the mark of the latest change this group saw
    /// (``remoteSeen()``), retried as ``Retry`` does, each attempt timed on
    /// its own; then what its answer says of the remote's history taken
    /// (``take(_:askedAt:)``: the remote's clock is measured by the attempt
    /// answered). Returns the answer, and whether the remote was found
    /// replaced or restored.
    func callKeepingMark<Answer>(
        _ what: String, history: (Answer) -> CloudRemoteHistory, _ call: (CloudHistoryMark?) async throws -> Answer
    ) async throws -> (answer: Answer, reset: Bool) {
        let (seen, clock) = (try remoteSeen(), configuration.clock)
        let (answer, asked) = try await Retry.run(configuration, what) {
            let asked = clock()
            return (try await call(seen), asked)
        }
        return (answer, try take(history(answer), askedAt: asked))
    }

    /// A round trip short enough for its answer to measure the remote's
    /// clock (``EngineState/clockOffset``) whatever the quickest was; a
    /// longer one measures it if it is at most twice the quickest (a remote
    /// far away answers nothing in 20 ms).
    static let clockRoundTrip: TimeInterval = 0.02

    /// The latest change of the remote's history this group saw (`nil`: none yet).
    func remoteSeen() throws -> CloudHistoryMark? {
        if let seen = state.remoteSeen.value { return seen }
        let seen = try readDatabase { try SyncState.remoteSeen($0) }
        state.remoteSeen = .stored(seen)
        return seen
    }

    /// When the remote was last found replaced or restored (`nil`: never).
    func lastRemoteReset() throws -> Date? {
        if let at = state.remoteResetAt.value { return at }
        let at = try readDatabase { try SyncState.remoteReset($0)?.at }
        state.remoteResetAt = .stored(at)
        return at
    }

    /// Takes what a remote's answer, asked at `asked`, says of its history:
    /// its clock (``EngineState/clockOffset``), its head (the mark the next
    /// call asks about), and whether the mark asked about is still part of it
    /// (if not, the remote is ``reset(_:seen:now:)``).
    /// - Returns: whether the remote was found replaced or restored.
    func take(_ history: CloudRemoteHistory, askedAt asked: Date) throws -> Bool {
        let seen = try remoteSeen()
        let answered = configuration.clock()
        // The remote's clock is read at some point of the call, taken for its middle: an answer that
        // took much longer than the quickest (a large page) says little of the offset, which is then
        // kept from a quicker one; an answer read before the call (`nowIsFresh` false) says nothing.
        let roundTrip = answered.timeIntervalSince(asked)
        if history.nowIsFresh { state.shortestRoundTrip = min(state.shortestRoundTrip, roundTrip) }
        if history.nowIsFresh, roundTrip <= max(Self.clockRoundTrip, 2 * state.shortestRoundTrip) {
            state.clockOffset = history.now.timeIntervalSince(asked) - roundTrip / 2
        }
        if history.head != seen { state.remoteSeen = .moved(history.head) }
        guard let seen else { return false }
        if seen.epoch != history.head.epoch {
            try reset(.replaced, seen: seen, now: history.head)
        } else if !history.keepsMark {
            try reset(.restored, seen: seen, now: history.head)
        } else {
            return false
        }
        return true
    }

    /// The remote is not the one this group synced with, or went back in
    /// time: every zone is listed again and compared with what this group
    /// holds (records the remote lacks are uploaded again, and so are the
    /// versions and deletes of this group's that it forgot; see
    /// ``RecordApplier/apply(_:assets:in:outcome:)``), the record types are
    /// prepared again, uploads parked against the old remote get another
    /// chance; and it is said, in an event and in `cloud status`.
    private func reset(_ kind: CloudRemoteReset.Kind, seen: CloudHistoryMark, now: CloudHistoryMark) throws {
        let display = remote.displayName
        let message: String
        switch kind {
        case .replaced:
            message =
                "the remote \(display) is another remote than the one this group synced with (epoch \(now.epoch.prefix(8)), was \(seen.epoch.prefix(8))): replaced or set up again; its record types are prepared again and what it lacks is uploaded"
        case .restored:
            message =
                "the remote \(display) went back in time (its log ends at \(now.position) and lacks the change this group saw at \(seen.position)): restored from an older copy; it is listed again and what it lost is uploaded again"
        }
        let reset = CloudRemoteReset(kind: kind, remote: display, message: message, at: Date())
        try rewriteSyncState(throughStore: false) { db, _ in
            try db.execute(sql: "DELETE FROM \(SyncState.zone)")
            try db.execute(sql: "DELETE FROM \(SyncState.parked) WHERE direction = 'up'")
            try db.execute(sql: "UPDATE \(SyncState.pending) SET rounds = 0")
            try SyncState.setRemoteReset(db, reset)
            try SyncState.setRemoteSeen(db, now)
        }
        state.remoteSeen = .stored(now)
        state.remoteResetAt = .stored(reset.at)
        // Another remote may keep another clock, and be farther.
        state.shortestRoundTrip = .infinity
        state.echoes.forget()
        state.setupLeft.insert(.prepareRemote)
        logger.info("remote reset", metadata: ["kind": "\(kind.rawValue)", "remote": "\(display)", "detail": "\(message)"])
        events.emit(.remoteReset(reset))
    }
}
