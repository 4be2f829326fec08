import Foundation
import GRDB

/// What the sync state keeps of the remote beyond its records: the latest
/// change of its history this group saw, the last time it was found
/// replaced or restored, the tags of records deleted here, and the columns
/// of its records that a table here lacks.
extension SyncState {
    // MARK: the remote's history

    /// The latest change of the remote's history this group saw (`nil`: none yet).
    static func remoteSeen(_ db: Database) throws -> CloudHistoryMark? {
        String.fromDatabaseValue(try value(db, "remote_seen")).flatMap { decode(CloudHistoryMark.self, json: $0) }
    }

    static func setRemoteSeen(_ db: Database, _ mark: CloudHistoryMark) throws {
        try setValue(db, "remote_seen", json(mark))
    }

    /// The last time the remote was found replaced or restored.
    static func remoteReset(_ db: Database) throws -> CloudRemoteReset? {
        String.fromDatabaseValue(try value(db, "remote_reset")).flatMap { decode(CloudRemoteReset.self, json: $0) }
    }

    static func setRemoteReset(_ db: Database, _ reset: CloudRemoteReset) throws {
        try setValue(db, "remote_reset", json(reset))
    }

    // MARK: tombstones

    /// How long the tag of a record deleted here is kept: a remote restored
    /// from a copy older than that brings such a record back (reported).
    static let tombstoneLifetime: TimeInterval = 90 * 24 * 3600

    /// What is kept of a record deleted here: the tag and the edit time
    /// (on the remote's clock; `nil` if kept by format 3) of the version
    /// deleted.
    struct Tombstone: Sendable {
        var tag: String
        var editedAt: Date?
        /// When the record went (this host's clock).
        var deletedAt: Date
    }

    /// The tombstone of a record deleted here (`nil`: none kept).
    static func tombstone(_ db: Database, entity: String, name: String) throws -> Tombstone? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT tag, edited_at, deleted_at FROM \(tombstone) WHERE entity = ? AND name = ?"),
            arguments: [entity, name]
        ).map {
            Tombstone(
                tag: $0[0], editedAt: ($0[1] as Double?).map(Date.init(timeIntervalSince1970:)),
                deletedAt: Date(timeIntervalSince1970: $0[2]))
        }
    }

    /// Whether any tombstone is kept (none: a fetch need not look records up).
    static func hasTombstones(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(tombstone))")) ?? false
    }

    static func pruneTombstones(_ db: Database, now: Date) throws {
        try db.execute(
            sql: "DELETE FROM \(tombstone) WHERE deleted_at < ?", arguments: [now.timeIntervalSince1970 - tombstoneLifetime])
    }

    // MARK: schema drift

    /// One column the remote's records have and a table here lacks.
    struct Drift: Sendable, Hashable {
        var table: String
        var column: String
        var seenAt: Date
    }

    /// Records that the remote's records of `entity` have `column`, which
    /// the table here lacks; returns whether it is new.
    static func noteDrift(_ db: Database, entity: String, column: String) throws -> Bool {
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(drift)(entity, \"column\", seen_at) VALUES (?, ?, ?)")
            .execute(arguments: [entity, column, Date().timeIntervalSince1970])
        return db.changesCount > 0
    }

    /// Forgets the drift of columns a table now has (it gained them).
    static func clearDrift(_ db: Database, entity: String, columns: [String]) throws {
        for column in columns {
            try db.cachedStatement(sql: "DELETE FROM \(drift) WHERE entity = ? AND \"column\" = ?").execute(arguments: [entity, column])
        }
    }

    static func drifts(_ db: Database) throws -> [Drift] {
        try Row.fetchAll(db, sql: "SELECT entity, \"column\", seen_at FROM \(drift) ORDER BY entity, \"column\"").map {
            Drift(table: $0[0], column: $0[1], seenAt: Date(timeIntervalSince1970: $0[2]))
        }
    }
}
