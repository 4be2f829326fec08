import Foundation

/// A snapshot of a group, as `groupstore status` prints it.
public struct GroupStatus: Hashable, Sendable {
    /// One member folder.
    public struct Member: Hashable, Sendable {
        public var name: String
        /// Whether a process holds the member's lock now.
        public var live: Bool
        /// The last sequence number it delivered; `nil` for a member that
        /// only writes (it never started delivery), which pins nothing.
        public var cursor: Int64?
        /// How many transactions it is behind the head (`nil` without a cursor).
        public var behind: Int64?
        /// Payload files in its folder not pruned yet.
        public var payloadFiles: Int
    }

    public var directory: String
    /// The newest closed transaction's sequence number.
    public var head: Int64
    /// Transactions up to here were pruned from the history.
    public var prunedThrough: Int64
    /// Transactions and change rows in the history now.
    public var historyTransactions: Int
    public var historyChanges: Int
    /// Size of `store.sqlite` plus its `-wal`, in bytes.
    public var databaseBytes: Int64
    public var members: [Member]

    /// Payload files in all member folders.
    public var pendingPayloadFiles: Int { members.reduce(0) { $0 + $1.payloadFiles } }

    /// The members that hold back pruning now: those with the lowest cursor,
    /// if it is behind the head (within the retention, pruning waits for them).
    public var holdingBack: [Member] {
        guard let lowest = members.compactMap(\.cursor).min(), lowest < head else { return [] }
        return members.filter { $0.cursor == lowest }
    }
}
