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

extension CloudHistoryChecked {
    /// For a remote that cannot check the history in the call's own
    /// transaction. A call that writes (`writes`): `history` asked first, the
    /// call made if the mark is kept, and the history asked again after it,
    /// keeping the head found first, so that a remote replaced or restored
    /// in between is found (``CloudRemoteHistory/keepsMark`` `false` beside
    /// the value). A read: made first, then the history asked, and what it
    /// read dropped if the mark is not kept (a remote reset before the
    /// history was asked is found by it).
    public static func apart(
        keeping mark: CloudHistoryMark?, writes: Bool, history: (CloudHistoryMark?) async throws -> CloudRemoteHistory,
        _ call: () async throws -> Value
    ) async throws -> CloudHistoryChecked {
        guard writes else {
            let value = try await call()
            let found = try await history(mark)
            return CloudHistoryChecked(value: found.keepsMark ? value : nil, history: found)
        }
        let before = try await history(mark)
        guard before.keepsMark else { return CloudHistoryChecked(value: nil, history: before) }
        let value = try await call()
        return CloudHistoryChecked(value: value, history: try await history(before.head))
    }
}

extension CloudDatabase {
    /// Fetches, then checks `mark` with ``history(keeping:)`` (the page
    /// dropped if it is not kept): two calls, for a remote that cannot do
    /// both in one.
    public func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        try await .apart(keeping: mark, writes: false, history: history(keeping:)) {
            try await fetchChanges(in: zone, since: token, limit: limit)
        }
    }

    /// Checks `mark` with ``history(keeping:)``, modifies, then reads where
    /// the history stands after the changes: three calls, for a remote that
    /// cannot do it in one transaction.
    public func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<
        [CloudModifyResult]
    > {
        try await .apart(keeping: mark, writes: true, history: history(keeping:)) { try await modify(changes) }
    }
}
