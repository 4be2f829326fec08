import Foundation

/// A snapshot of a group, as `groupstore status` prints it.
public struct GroupStatus: Hashable, Sendable {
    /// One member folder.
    public struct Member: Hashable, Sendable {
        public var name: String
        /// Whether a process holds the member's lock now.
        public var live: Bool
        /// The last sequence number it delivered, if it ever joined as a watcher.
        public var cursor: Int64?
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

    /// One JSON object: `{"directory","head","prunedThrough","historyTransactions","historyChanges",
    /// "pendingPayloadFiles","databaseBytes","members":[{"name","live","cursor","payloadFiles"}]}`.
    public var json: String {
        let members = members.map { member in
            "{\"name\":\(JSONText.string(member.name)),\"live\":\(member.live),\"cursor\":\(member.cursor.map(String.init) ?? "null"),"
                + "\"payloadFiles\":\(member.payloadFiles)}"
        }
        return "{\"directory\":\(JSONText.string(directory)),\"head\":\(head),\"prunedThrough\":\(prunedThrough),"
            + "\"historyTransactions\":\(historyTransactions),\"historyChanges\":\(historyChanges),"
            + "\"pendingPayloadFiles\":\(pendingPayloadFiles),\"databaseBytes\":\(databaseBytes),"
            + "\"members\":[\(members.joined(separator: ","))]}"
    }
}
