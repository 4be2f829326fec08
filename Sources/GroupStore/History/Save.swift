import Foundation

/// One committed transaction of the group, as delivered to a member.
///
/// Delivered through ``GroupStore/saves()`` and posted as
/// `Notification.Name.groupStoreDidSave`. Within one process, each committed
/// transaction of another process reaches every subscriber exactly once, in
/// ``seq`` order.
public struct Save: Hashable, Sendable, Identifiable {
    /// What a save means.
    public enum Kind: Hashable, Sendable {
        /// A committed transaction; ``Save/changes`` says what it changed.
        case transaction
        /// The member's cursor fell behind the pruned history: transactions
        /// up to ``Save/seq`` can no longer be listed. Refetch what you keep
        /// derived from the database. ``Save/changes`` is empty.
        case resync
    }

    /// The author of changes made outside the library (the `sqlite3` shell, a script).
    public static let externalAuthor = "(external)"

    public var kind: Kind
    /// The transaction's sequence number, totally ordered across the group.
    public var seq: Int64
    /// The member that committed it, or ``externalAuthor``.
    public var author: String
    /// When it was committed, to the microsecond. For a writer outside the
    /// library: when a member closed its changes into a transaction (the
    /// next library write, or a peer's merge, usually within a millisecond
    /// of its commit).
    public var committedAt: Date
    /// What changed, per entity (table), in order of first change.
    public var changes: [EntityChange]

    public init(kind: Kind = .transaction, seq: Int64, author: String, committedAt: Date, changes: [EntityChange]) {
        self.kind = kind
        self.seq = seq
        self.author = author
        self.committedAt = committedAt
        self.changes = changes
    }

    public var id: Int64 { seq }

    /// Whether a writer outside the library made this transaction.
    public var isExternal: Bool { author == Save.externalAuthor }

    /// The names of the entities this save changed.
    public var entityNames: [String] { changes.map(\.entity) }

    /// The change of `entity` (compared as SQLite compares table names,
    /// ignoring ASCII case), if this save touched it.
    public func change(of entity: String) -> EntityChange? {
        changes.first { EntityName.same($0.entity, entity) }
    }

    /// What of this save `member` is given: not its own saves, only the
    /// entities in `scope`, and nothing for a net-empty transaction (a row
    /// inserted and deleted again).
    func delivered(to member: MemberName, scope: EntityNameSet?) -> Save? {
        guard author != member.rawValue, let visible = restricted(to: scope) else { return nil }
        return visible.kind == .resync || !visible.changes.isEmpty ? visible : nil
    }

    /// This save restricted to `entities` (SQLite's case-insensitive names),
    /// or `nil` if it touches none of them. A resync always passes.
    func restricted(to entities: EntityNameSet?) -> Save? {
        guard let entities, kind == .transaction else { return self }
        var copy = self
        copy.changes = changes.filter { entities.contains($0.entity) }
        return copy.changes.isEmpty ? nil : copy
    }
}

/// What one transaction changed in one entity (table).
///
/// Keys are folded per row the way Core Data reports a save: inserted then
/// updated is inserted; inserted then deleted is not listed; deleted then
/// inserted again (a `REPLACE`) is updated.
public struct EntityChange: Hashable, Sendable {
    /// The table name (its name when the save was read: a table renamed since
    /// is reported under its new name).
    public var entity: String
    /// Keys of rows inserted (and not deleted again in the same transaction).
    public var inserted: [KeyValue]
    /// Keys of rows updated (or replaced).
    public var updated: [KeyValue]
    /// Keys of rows deleted.
    public var deleted: [KeyValue]
    /// The table was created, dropped, renamed, had its columns changed
    /// (added, renamed, dropped), or was rewritten (`VACUUM` renumbering
    /// rowids) in this transaction: keys of rows that were there before are
    /// not listed. Refetch what you derive from it (if it no longer
    /// exists, it was dropped or renamed away).
    public var reset: Bool

    public init(
        entity: String, inserted: [KeyValue] = [], updated: [KeyValue] = [], deleted: [KeyValue] = [], reset: Bool = false
    ) {
        self.entity = entity
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.reset = reset
    }

    /// Whether it says nothing at all.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && !reset }
}

/// SQLite compares table names ignoring ASCII case.
enum EntityName {
    static func same(_ a: String, _ b: String) -> Bool { key(a) == key(b) }
    static func key(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            // A-Z to a-z; everything else as it is.
            scalars.append((65...90).contains(scalar.value) ? Unicode.Scalar(UInt8(scalar.value + 32)) : scalar)
        }
        return String(scalars)
    }
}

/// A set of table names matched the way SQLite matches them.
struct EntityNameSet: Sendable, Hashable {
    private let keys: Set<String>
    init<S: Sequence>(_ names: S) where S.Element == String { keys = Set(names.map(EntityName.key)) }
    func contains(_ name: String) -> Bool { keys.contains(EntityName.key(name)) }
}

extension Notification.Name {
    /// Posted for each delivered ``Save``, in order, from a serial queue of
    /// the store's own (not the main queue, and not the queue that merges:
    /// an observer on any queue may call any API of the store); the
    /// notification's `object` is the ``GroupStore`` and
    /// `userInfo[GroupStore.saveUserInfoKey]` the ``Save``.
    public static let groupStoreDidSave = Notification.Name("GroupStoreDidSave")
}
