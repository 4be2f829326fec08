import Foundation

/// The answer of a call made on condition that a mark is still part of the
/// remote's history (``CloudDatabase/fetchChanges(in:since:limit:keeping:)``,
/// ``CloudDatabase/modify(_:keeping:)``): the remote checks the mark in the
/// same transaction as the call, so a bridge needs no round trip of its own
/// to find a remote replaced or restored, and no window opens between the
/// check and the call.
public struct CloudHistoryChecked<Value: Sendable>: Sendable {
    /// What the call answered; `nil` when the mark is not part of the
    /// history (``CloudRemoteHistory/keepsMark`` is `false`): then nothing
    /// was read or written.
    public var value: Value?
    /// Where the remote's history stands: after the call's own changes (a
    /// modify), or as the call found it.
    public var history: CloudRemoteHistory

    public init(value: Value?, history: CloudRemoteHistory) {
        self.value = value
        self.history = history
    }
}

extension CloudDatabase {
    /// Checks `mark` with ``history(keeping:)``, then fetches: two calls, for
    /// a remote that cannot do both in one.
    public func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        let history = try await history(keeping: mark)
        guard history.keepsMark else { return CloudHistoryChecked(value: nil, history: history) }
        return CloudHistoryChecked(value: try await fetchChanges(in: zone, since: token, limit: limit), history: history)
    }

    /// Checks `mark` with ``history(keeping:)``, modifies, then reads where
    /// the history stands after the changes: three calls, for a remote that
    /// cannot do it in one transaction. A remote replaced or restored between
    /// the first two is found by the third (``CloudRemoteHistory/keepsMark``
    /// `false` beside the results).
    public func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<[CloudModifyResult]> {
        let before = try await history(keeping: mark)
        guard before.keepsMark else { return CloudHistoryChecked(value: nil, history: before) }
        let results = try await modify(changes)
        return CloudHistoryChecked(value: results, history: try await history(keeping: before.head))
    }
}
