import Foundation

/// A point in a remote's history: which remote (its epoch, chosen when it
/// was created or set up), a position in its change log, and what
/// identifies the change logged there.
///
/// A bridge keeps the mark of the latest change it has seen and has the
/// remote check, with every fetch and upload, whether that change is still
/// part of its history (``CloudDatabase/modify(_:keeping:)``,
/// ``CloudDatabase/fetchChanges(in:since:limit:keeping:)``; on its own,
/// ``CloudDatabase/history(keeping:)``): a remote of another epoch
/// was replaced by a fresh one; one whose log lacks the change (its log is
/// behind it, or another change holds its position) was restored from an
/// older copy — even when it has been written to since.
public struct CloudHistoryMark: Hashable, Sendable, Codable {
    /// The remote's identity.
    public var epoch: String
    /// A position in its change log (0: before the first change).
    public var position: Int64
    /// What identifies the change at ``position`` on this remote (empty when
    /// the remote cannot tell, for a change logged before it kept one).
    public var entry: String

    public init(epoch: String, position: Int64, entry: String) {
        self.epoch = epoch
        self.position = position
        self.entry = entry
    }
}

/// What a remote says of its history (``CloudDatabase/history(keeping:)``).
public struct CloudRemoteHistory: Sendable {
    /// Its latest change.
    public var head: CloudHistoryMark
    /// Whether the mark asked about is part of this history: same epoch, and
    /// its change still logged at its position (or pruned with the log:
    /// then the remote cannot tell, and says it is kept). `true` when no mark
    /// was asked about.
    public var keepsMark: Bool
    /// The remote's clock when it answered.
    public var now: Date
    /// Whether ``now`` was read during the call that returns it, so that the
    /// call's round trip measures the remote's clock. Not so for an answer
    /// read before the call (a gateway's page sent with its hint): its `now`
    /// lacks the way from the remote, and the bridge does not measure the
    /// clock with it.
    public var nowIsFresh: Bool

    public init(head: CloudHistoryMark, keepsMark: Bool, now: Date, nowIsFresh: Bool = true) {
        self.head = head
        self.keepsMark = keepsMark
        self.now = now
        self.nowIsFresh = nowIsFresh
    }
}

/// A remote found not to be the one a group synced with, or to have gone
/// back in time: what the bridge reports (``CloudSyncEvent/remoteReset(_:)``,
/// `cloud status`) once it has brought the group and the remote to one
/// state again.
public struct CloudRemoteReset: Sendable, Codable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Codable, Hashable {
        /// Another remote (another epoch): replaced by a fresh one, or set up again.
        case replaced
        /// The same remote with part of its history gone: restored from an older copy.
        case restored
    }

    public var kind: Kind
    /// The remote, as named in messages.
    public var remote: String
    /// One line: what was found and what the bridge does.
    public var message: String
    /// When the bridge found it.
    public var at: Date

    public init(kind: Kind, remote: String, message: String, at: Date) {
        self.kind = kind
        self.remote = remote
        self.message = message
        self.at = at
    }

    public var description: String { message }
}
