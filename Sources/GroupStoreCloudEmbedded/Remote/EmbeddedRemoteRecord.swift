import Foundation
import GRDB
import GroupStoreCloud

/// A row of the `records` table: a record, or the tombstone a delete left.
///
/// Rows are decoded defensively (a remote is a file any process can write):
/// a value of the wrong type is a ``CloudSyncError/Code/badRemote``, never a
/// crash.
struct EmbeddedRemoteRecord: Sendable {
    var record: CloudRecord
    var deleted: Bool
    /// The change-log position of the record's latest change.
    var seq: Int64

    /// The live record, or `nil` for a tombstone.
    var live: CloudRecord? { deleted ? nil : record }

    /// The columns every query selects, in the order ``init(row:display:)`` reads them.
    static let columns = "zone, type, name, owner, tag, fields, edited_at, edited_by, deleted, seq"

    init(record: CloudRecord, deleted: Bool, seq: Int64) {
        self.record = record
        self.deleted = deleted
        self.seq = seq
    }

    init(row: Row, display: String) throws {
        let zoneText = try row.decode(String.self, atIndex: 0)
        let type = try row.decode(String.self, atIndex: 1)
        let name = try row.decode(String.self, atIndex: 2)
        guard let zone = CloudZone(description: zoneText) else {
            throw CloudSyncError(.badRemote, "the remote \(display) holds a record with an unreadable zone")
        }
        let id = CloudRecordID(zone: zone, type: type, name: name)
        let fields: CloudFields
        do {
            fields = try CloudFieldsJSON.decode(try row.decode(String.self, atIndex: 5))
        } catch {
            throw CloudSyncError(.badRemote, "the remote \(display) holds unreadable fields for \(id)", underlying: error)
        }
        let editedAt = try row.decode(Double.self, atIndex: 6)
        guard editedAt.isFinite else {
            throw CloudSyncError(.badRemote, "the remote \(display) holds an unreadable edit time for \(id)")
        }
        record = CloudRecord(
            id: id,
            tag: try row.decode(String.self, atIndex: 4),
            fields: fields,
            owner: try row.decode(String.self, atIndex: 3),
            editedAt: Date(timeIntervalSince1970: editedAt),
            editedBy: try row.decode(String.self, atIndex: 7)
        )
        deleted = try row.decode(Int64.self, atIndex: 8) != 0
        seq = try row.decode(Int64.self, atIndex: 9)
    }

    /// The row of `id`, record or tombstone, if any.
    static func fetch(_ db: Database, _ id: CloudRecordID, display: String) throws -> EmbeddedRemoteRecord? {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(columns) FROM records WHERE zone = ? AND type = ? AND name = ?"),
            arguments: [id.zone.description, id.type, id.name]
        )
        return try row.map { try EmbeddedRemoteRecord(row: $0, display: display) }
    }

    /// Writes this row (insert or replace).
    func store(_ db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO records (zone, type, name, owner, tag, fields, edited_at, edited_by, deleted, seq)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (zone, type, name) DO UPDATE SET
                    owner = excluded.owner, tag = excluded.tag, fields = excluded.fields,
                    edited_at = excluded.edited_at, edited_by = excluded.edited_by,
                    deleted = excluded.deleted, seq = excluded.seq
                """
        ).execute(
            arguments: [
                record.id.zone.description, record.id.type, record.id.name, record.owner, record.tag,
                CloudFieldsJSON.encode(deleted ? [:] : record.fields),
                record.editedAt.timeIntervalSince1970, record.editedBy, deleted ? 1 : 0, seq,
            ]
        )
    }

    /// Appends `id` to the change log: the new change's position, and what
    /// identifies it. `previous`: the record's fields before the change,
    /// when it was live (what a subscription's subset held before it).
    static func logChange(_ db: Database, _ id: CloudRecordID, previous: CloudFields?) throws -> (seq: Int64, entry: String) {
        let entry = FeedToken.newEntry()
        try db.cachedStatement(sql: "INSERT INTO change_log (zone, type, name, entry, previous) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [id.zone.description, id.type, id.name, entry, previous.map { CloudFieldsJSON.encode($0) }])
        return (db.lastInsertedRowID, entry)
    }
}
