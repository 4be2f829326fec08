import Foundation

/// What one read of the history found: the value a ``Merger`` returns and
/// its owner, ``Delivery``, acts on (hands the saves over, moves the cursor,
/// notifies the observers, decides whether to read again).
struct MergeOutcome: Sendable {
    /// What the owner does next.
    enum Next: Sendable, Equatable {
        /// Everything committed is read.
        case done
        /// More transactions follow the ones read: read again.
        case more
        /// A writer outside the library committed changes that no transaction
        /// closes yet: close them (under the write lock), then read again.
        case closeOutsideChanges
        /// The schema changed outside the library: track it (under the write
        /// lock), then read again.
        case trackSchema
        /// The history could not be read (logged): try again on the next wake-up.
        case failed
    }

    /// Every transaction read, in sequence order, this member's own included
    /// (their changes are not folded: nothing here needs them).
    var transactions: [Save] = []
    /// What of them this member is given (not its own, in scope, not empty).
    var deliverable: [Save] = []
    /// The cursor does not belong to this history (a restored or replaced
    /// database, a history reset) or fell behind what was pruned: this
    /// resync replaces everything read before.
    var resync: Save?
    /// The group's newest transaction when it was read.
    var head: Int64 = 0
    /// `PRAGMA schema_version` when it was read.
    var schemaVersion: Int64 = 0
    /// When the read ended (for the trace; 0 when not traced).
    var readAt: Double = 0
    var next: Next = .done

    /// Whether anything new was found.
    var found: Bool { !transactions.isEmpty || resync != nil }

    /// The tables other members changed (for this process's GRDB observers).
    func tablesChanged(by member: MemberName) -> [String] {
        transactions.lazy.filter { $0.author != member.rawValue }.flatMap(\.entityNames)
    }
}
