import Foundation

/// Who may see the records of a zone.
public enum CloudScope: String, Hashable, Sendable, Codable, CaseIterable {
    /// Only the zone's owner reads and writes.
    case `private`
    /// Everyone reads; a record's creator writes it.
    case `public`
    /// A zone its owner shares with named users, each read-only or
    /// read-write (``CloudDatabase/share(_:with:access:)``); the owner reads
    /// and writes.
    case shared
}

/// What a user a zone is shared with may do in it.
public enum CloudShareAccess: String, Hashable, Sendable, Codable, CaseIterable {
    /// Read the zone's records.
    case readOnly = "read-only"
    /// Read, create, change and delete the zone's records.
    case readWrite = "read-write"
}

/// A zone: the unit of change tokens. Each user has one private zone; there
/// is one public zone; a user owns any number of shared zones, each named.
public struct CloudZone: Hashable, Sendable, Codable, CustomStringConvertible {
    public var scope: CloudScope
    /// The owner of a private or shared zone; empty for the public zone.
    public var owner: String
    /// A shared zone's name (unique among its owner's); empty otherwise.
    public var name: String

    public init(scope: CloudScope, owner: String, name: String = "") {
        self.scope = scope
        self.owner = scope == .public ? "" : owner
        self.name = scope == .shared ? name : ""
    }

    public static func `private`(_ owner: String) -> CloudZone { CloudZone(scope: .private, owner: owner) }
    public static let `public` = CloudZone(scope: .public, owner: "")
    /// The shared zone `name` of `owner`.
    public static func shared(owner: String, name: String) -> CloudZone { CloudZone(scope: .shared, owner: owner, name: name) }

    /// `private/<owner>`, `public` or `shared/<owner>/<name>`: how the zone
    /// is stored and named in messages.
    public var description: String {
        switch scope {
        case .public: return "public"
        case .private: return "private/\(owner)"
        case .shared: return "shared/\(owner)/\(name)"
        }
    }

    public init?(description: String) {
        if description == "public" {
            self = .public
        } else if description.hasPrefix("private/"), description.count > 8 {
            self = .private(String(description.dropFirst(8)))
        } else if description.hasPrefix("shared/") {
            let rest = description.dropFirst(7)
            guard let slash = rest.lastIndex(of: "/") else { return nil }
            let owner = String(rest[..<slash])
            let name = String(rest[rest.index(after: slash)...])
            guard Self.isOwnerName(owner), Self.isZoneName(name) else { return nil }
            self = .shared(owner: owner, name: name)
        } else {
            return nil
        }
    }

    /// A shared zone's owner as a zone names it: not empty, no surrounding
    /// white space, no control characters.
    public static func isOwnerName(_ owner: String) -> Bool {
        !owner.isEmpty && owner.trimmingCharacters(in: .whitespaces) == owner
            && !owner.unicodeScalars.contains { CharacterSet.controlCharacters.contains($0) }
    }

    /// A user name a remote accepts (a private zone's owner): 1 to 128 of
    /// `A-Z a-z 0-9 . _ - @ +`.
    package static func isUserName(_ name: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@+".unicodeScalars)
        return !name.isEmpty && name.count <= 128 && name.unicodeScalars.allSatisfy { allowed.contains($0) }
    }

    /// A shared zone's name: 1 to 63 of `A-Z a-z 0-9 . _ -`.
    public static func isZoneName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 63
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
            }
    }
}

/// Names one record: its zone, its type (the table) and its name (the
/// primary key as text).
public struct CloudRecordID: Hashable, Sendable, Codable, CustomStringConvertible {
    public var zone: CloudZone
    public var type: String
    public var name: String

    public init(zone: CloudZone, type: String, name: String) {
        self.zone = zone
        self.type = type
        self.name = name
    }

    public var description: String { "\(type)/\(name) in \(zone)" }
}

/// A record as the remote holds it.
public struct CloudRecord: Hashable, Sendable, Codable {
    public var id: CloudRecordID
    /// The server's change tag: it changes with every accepted save.
    public var tag: String
    /// Every field the server has for the record.
    public var fields: CloudFields
    /// The user who created it.
    public var owner: String
    /// When the edit was made, for newer-edit-wins: the editor's commit
    /// time, raised above the version it edited and never later than the
    /// server's clock when the server accepted it.
    public var editedAt: Date
    /// The user who saved it last.
    public var editedBy: String

    public init(id: CloudRecordID, tag: String, fields: CloudFields, owner: String, editedAt: Date, editedBy: String) {
        self.id = id
        self.tag = tag
        self.fields = fields
        self.owner = owner
        self.editedAt = editedAt
        self.editedBy = editedBy
    }
}

/// One change sent to the remote.
public enum CloudRecordChange: Hashable, Sendable {
    /// Saves `fields` (only those that changed) onto the record whose current
    /// tag is `baseTag` (`nil`: the record is new to this client).
    ///
    /// `bringsBack`: the save brings back a version the remote forgot (it was
    /// replaced, or restored from an older copy). With no base tag such a save
    /// creates the record only where no delete was edited after `editedAt`
    /// (by more than ``sameVersion``): a later delete is answered as a
    /// conflict with `nil` and the delete's time, as a stale edit of a
    /// deleted record is, so the version brought back cannot undo a delete
    /// made since. An ordinary new record is created over any tombstone.
    case save(id: CloudRecordID, baseTag: String?, fields: CloudFields, editedAt: Date, bringsBack: Bool = false)
    /// Deletes the record whose current tag is `baseTag`.
    case delete(id: CloudRecordID, baseTag: String?, editedAt: Date)

    public var id: CloudRecordID {
        switch self {
        case .save(let id, _, _, _, _), .delete(let id, _, _): return id
        }
    }

    /// Edit times closer than this are one version's, carried through
    /// another remote (each version of a record is raised at least 1 ms above
    /// the one it edited; a time travels with microseconds).
    public static let sameVersion: TimeInterval = 0.0005

    /// Whether a save bringing a version back with no base tag (edited at
    /// `editedAt`) meets a delete edited after it, which a remote answers
    /// as a conflict (see ``save(id:baseTag:fields:editedAt:bringsBack:)``).
    public static func deleteIsLater(_ deletedAt: Date?, than editedAt: Date) -> Bool {
        guard let deletedAt else { return false }
        return deletedAt.timeIntervalSince(editedAt) > sameVersion
    }

    /// An estimate of the bytes this change adds to a batch.
    package var batchSize: Int {
        switch self {
        case .save(let id, _, let fields, _, _):
            return fields.reduce(id.name.utf8.count + 64) { $0 + $1.key.utf8.count + $1.value.batchSize }
        case .delete(let id, _, _): return id.name.utf8.count + 64
        }
    }
}

/// What the remote did with one change.
public enum CloudModifyResult: Hashable, Sendable {
    /// Saved: the record as the server now holds it (new tag, all fields).
    case saved(CloudRecord)
    /// Deleted (or already absent with no tag given).
    case deleted(CloudRecordID)
    /// The base tag was stale: the record as the server holds it now, or
    /// `nil` if the server deleted it. Then `deletedAt` is the delete's edit
    /// time (as a save's ``CloudRecord/editedAt``: the deleting client's,
    /// raised above the version it deleted, never after the server's clock)
    /// where the remote knows it; `nil` when it does not (a record it never
    /// held, a tombstone it pruned, a remote or gateway of an older format).
    case conflict(CloudRecordID, server: CloudRecord?, deletedAt: Date? = nil)
    /// Refused for good (not allowed, invalid): retrying will not help.
    case refused(CloudRecordID, reason: String)
}

/// An opaque position in a zone's change feed.
public struct CloudChangeToken: Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// A page of a zone's changes since a token.
public struct CloudChangeBatch: Sendable {
    /// Records saved since the token (their current state), in change order.
    public var changed: [CloudRecord]
    /// Records deleted since the token.
    public var deleted: [CloudRecordID]
    /// Records that left the fetch's subscription since the token (see
    /// ``CloudSubscription``): still on the remote, no longer in this
    /// host's subset.
    public var movedOut: [CloudRecordID]
    /// The position after this page.
    public var token: CloudChangeToken
    /// More changes follow: fetch again from `token`.
    public var moreComing: Bool

    public init(
        changed: [CloudRecord], deleted: [CloudRecordID], movedOut: [CloudRecordID] = [], token: CloudChangeToken, moreComing: Bool
    ) {
        self.changed = changed
        self.deleted = deleted
        self.movedOut = movedOut
        self.token = token
        self.moreComing = moreComing
    }
}
