import Foundation
import GRDB

/// The bridge's state in `store.sqlite`, in `groupstore_cloud_*` tables the
/// history does not track: per record its zone, server change tag and last
/// acknowledged values (the ancestor of three-way merges); the pending keys
/// and the intake position; per zone the change token; parked records.
/// Nothing is kept only in memory. The tables are made and upgraded by
/// ``SyncStateSchema``.
enum SyncState {
    static let meta = "groupstore_cloud_meta"
    static let record = "groupstore_cloud_record"
    static let pending = "groupstore_cloud_pending"
    static let parked = "groupstore_cloud_parked"
    static let zone = "groupstore_cloud_zone"
    static let diff = "groupstore_cloud_diff"
    static let tombstone = "groupstore_cloud_tombstone"
    static let drift = "groupstore_cloud_drift"

    /// Whether the tables exist (`cloud status` on a group never synced).
    static func exists(_ db: Database) throws -> Bool {
        try db.tableExists(meta)
    }

    // MARK: meta

    static func value(_ db: Database, _ key: String) throws -> DatabaseValue {
        try DatabaseValue.fetchOne(db.cachedStatement(sql: "SELECT value FROM \(meta) WHERE key = ?"), arguments: [key]) ?? .null
    }

    static func setValue(_ db: Database, _ key: String, _ value: (any DatabaseValueConvertible)?) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(meta)(key, value) VALUES (?, ?)").execute(arguments: [key, value])
    }

    /// The last local save taken in (`intake_seq`).
    static func intakePosition(_ db: Database) throws -> Int64 {
        Int64.fromDatabaseValue(try value(db, "intake_seq")) ?? 0
    }

    static func setIntakePosition(_ db: Database, _ seq: Int64) throws {
        try setValue(db, "intake_seq", seq)
    }

    /// Forgets every record, pending key, parked record, token and diff mark
    /// (a change of account).
    static func forgetRecords(_ db: Database) throws {
        for name in [record, pending, parked, zone, diff, tombstone, drift] { try db.execute(sql: "DELETE FROM \(name)") }
    }

    // MARK: records

    struct RecordState: Sendable {
        var zone: String
        /// The remote's tag of the version acknowledged; empty once the
        /// remote forgot it (``forgetTag(_:entity:name:)``).
        var tag: String
        var ancestor: CloudFields
        var editedAt: Date

        /// The remote forgot this version: it goes up again as a new record.
        var forgotten: Bool { tag.isEmpty }
    }

    static func recordState(_ db: Database, entity: String, name: String) throws -> RecordState? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT zone, tag, ancestor, edited_at FROM \(record) WHERE entity = ? AND name = ?"),
                arguments: [entity, name])
        else { return nil }
        // An unreadable ancestor (edited by hand) counts as unknown: the row is compared as new.
        let ancestor = (try? CloudFieldsJSON.decode(row[2])) ?? [:]
        return RecordState(zone: row[0], tag: row[1], ancestor: ancestor, editedAt: Date(timeIntervalSince1970: row[3]))
    }

    static func setRecord(_ db: Database, entity: String, name: String, record cloud: CloudRecord) throws {
        // An upsert: what the record's applies derived (see ``derivedRound``) stays.
        try db.cachedStatement(
            sql: """
                INSERT INTO \(record)(entity, name, zone, tag, ancestor, edited_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (entity, name) DO UPDATE SET
                    zone = excluded.zone, tag = excluded.tag, ancestor = excluded.ancestor, edited_at = excluded.edited_at
                """
        ).execute(arguments: [
            entity, name, cloud.id.zone.description, cloud.tag, CloudFieldsJSON.encode(cloud.fields), cloud.editedAt.timeIntervalSince1970,
        ])
    }

    /// Takes the remote's version as the acknowledged one: its tag and
    /// values, or no record when the remote has none (`nil`).
    static func adopt(_ db: Database, entity: String, name: String, _ server: CloudRecord?) throws {
        if let server {
            try setRecord(db, entity: entity, name: name, record: server)
        } else {
            try removeRecord(db, entity: entity, name: name)
        }
    }

    /// Keeps what the remote acknowledged of a record it has since forgotten
    /// (it was replaced, or restored from an older copy) under no tag: the
    /// version is still the base a local edit is told by, and it goes up as
    /// a new record (``RecordState/forgotten``).
    static func forgetTag(_ db: Database, entity: String, name: String) throws {
        try db.cachedStatement(sql: "UPDATE \(record) SET tag = '' WHERE entity = ? AND name = ?").execute(arguments: [entity, name])
    }

    /// Forgets a record, keeping its last tag and edit time as a tombstone (see ``tombstone(_:entity:name:)``).
    static func removeRecord(_ db: Database, entity: String, name: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO \(tombstone)(entity, name, zone, tag, deleted_at, edited_at)
                SELECT entity, name, zone, tag, ?, edited_at FROM \(record) WHERE entity = ? AND name = ?
                """
        ).execute(arguments: [Date().timeIntervalSince1970, entity, name])
        try db.cachedStatement(sql: "DELETE FROM \(record) WHERE entity = ? AND name = ?").execute(arguments: [entity, name])
    }

    // MARK: pending

    struct Pending: Sendable, Hashable {
        var entity: String
        var name: String
        var editedAt: Date
        var version: Int64
        var rounds: Int
        /// The edit time (on the remote's clock) of a version this group
        /// acknowledged and brings back to a remote that forgot it (replaced,
        /// or restored from an older copy); `nil` for a local edit only. A
        /// version of the remote's edited before it is older than what this
        /// group acknowledged: not an edit that beats this one, whatever the
        /// policy (see ``RecordApplier/settle``).
        var restores: Date?
    }

    /// What is in flight for a key: written before an upload is sent, so a
    /// member that takes over after a crash knows the remote's version as its
    /// own upload (acknowledged, not a conflict) when it sees it come back.
    enum Sent: Equatable, Sendable {
        case save(CloudFields)
        case delete
    }

    static let sentDelete = "delete"

    /// Records what is about to be sent. An earlier upload never answered
    /// (its member died) is kept as `sent_before`: the remote may have taken
    /// it, and it must still be recognised when it comes back.
    static func markSending(_ db: Database, entity: String, name: String, _ sent: Sent) throws {
        try db.cachedStatement(
            sql: "UPDATE \(pending) SET sent_before = coalesce(sent_before, sent), sent = ? WHERE entity = ? AND name = ?"
        ).execute(arguments: [text(sent), entity, name])
    }

    /// Forgets what was in flight (answered, or known to be this group's).
    static func clearSent(_ db: Database, entity: String, name: String) throws {
        try db.cachedStatement(sql: "UPDATE \(pending) SET sent = NULL, sent_before = NULL WHERE entity = ? AND name = ?")
            .execute(arguments: [entity, name])
    }

    private static func text(_ sent: Sent) -> String {
        if case .save(let fields) = sent { return CloudFieldsJSON.encode(fields) }
        return sentDelete
    }

    /// Uploads of this key that may have reached the remote unanswered.
    static func inFlight(_ db: Database, entity: String, name: String) throws -> [Sent] {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT sent, sent_before FROM \(pending) WHERE entity = ? AND name = ?"),
                arguments: [entity, name])
        else { return [] }
        return [row[0] as String?, row[1] as String?].compactMap { text in
            guard let text else { return nil }
            if text == sentDelete { return .delete }
            return (try? CloudFieldsJSON.decode(text)).map { .save($0) }
        }
    }

    /// Whether any record is held (acknowledged by the remote).
    static func hasRecords(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(record))")) ?? true
    }

    /// Whether any key is pending.
    static func hasPending(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(pending))")) ?? true
    }

    static func pendingEntry(_ db: Database, entity: String, name: String) throws -> Pending? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT entity, name, edited_at, version, rounds, restores FROM \(pending) WHERE entity = ? AND name = ?"),
            arguments: [entity, name]
        ).map(pendingFrom)
    }

    /// Pending keys not parked, at most `limit`, of the given entities. A key
    /// parked on the way down (its conflict's result waits for a parent) is
    /// not uploaded either: each upload would only meet the same conflict
    /// again; it goes up once the fetched version is settled.
    static func pendingBatch(_ db: Database, entity: String, limit: Int) throws -> [Pending] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT p.entity, p.name, p.edited_at, p.version, p.rounds, p.restores FROM \(pending) AS p
                    WHERE p.entity = ? AND NOT EXISTS (SELECT 1 FROM \(parked) AS k WHERE k.entity = p.entity AND k.name = p.name)
                    ORDER BY p.name LIMIT ?
                    """),
            arguments: [entity, limit]
        ).map(pendingFrom)
    }

    private static func pendingFrom(_ row: Row) -> Pending {
        Pending(
            entity: row[0], name: row[1], editedAt: Date(timeIntervalSince1970: row[2]), version: row[3], rounds: row[4],
            restores: (row[5] as Double?).map(Date.init(timeIntervalSince1970:)))
    }

    /// Clears a pending key unless it changed again since `entry` was read.
    /// Then only what was in flight is forgotten (it was answered), and what
    /// the key brought back (``Pending/restores``): the version read was
    /// settled (acknowledged, or found to be the remote's), so what stays
    /// pending is a later local edit on top of what the remote holds — a
    /// row created again after this group's delete went up is a new record,
    /// not a version brought back.
    static func clearPending(_ db: Database, _ entry: Pending) throws {
        try db.cachedStatement(sql: "DELETE FROM \(pending) WHERE entity = ? AND name = ? AND version = ?")
            .execute(arguments: [entry.entity, entry.name, entry.version])
        if db.changesCount > 0 {
            try releaseParkedUpload(db, entity: entry.entity, name: entry.name)
        } else {
            try db.cachedStatement(
                sql: "UPDATE \(pending) SET sent = NULL, sent_before = NULL, restores = NULL WHERE entity = ? AND name = ?"
            )
            .execute(arguments: [entry.entity, entry.name])
        }
    }

    static func clearPending(_ db: Database, entity: String, name: String) throws {
        try db.cachedStatement(sql: "DELETE FROM \(pending) WHERE entity = ? AND name = ?").execute(arguments: [entity, name])
        try releaseParkedUpload(db, entity: entity, name: name)
    }

    /// Nothing left to upload for a key: a parked upload of it is moot.
    private static func releaseParkedUpload(_ db: Database, entity: String, name: String) throws {
        try db.cachedStatement(sql: "DELETE FROM \(parked) WHERE entity = ? AND name = ? AND direction = 'up'").execute(arguments: [
            entity, name,
        ])
    }

    static func setRounds(_ db: Database, entity: String, name: String, rounds: Int) throws {
        try db.cachedStatement(sql: "UPDATE \(pending) SET rounds = ? WHERE entity = ? AND name = ?").execute(arguments: [
            rounds, entity, name,
        ])
    }

    // MARK: parked

    /// JSON for the state's own columns, times as Unix seconds (as everywhere in the format).
    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, json: String) -> T? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try? decoder.decode(type, from: Data(json.utf8))
    }

    static func park(_ db: Database, entity: String, name: String, direction: String, reason: String, record cloud: CloudRecord?) throws {
        let json = cloud.map { Self.json($0) }
        try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO \(parked)(entity, name, direction, reason, record, parked_at) VALUES (?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [entity, name, direction, reason, json, Date().timeIntervalSince1970])
    }

    /// Fetched records waiting for their parent (orphans), oldest first.
    static func orphans(_ db: Database) throws -> [(entity: String, name: String, record: CloudRecord?)] {
        try Row.fetchAll(db, sql: "SELECT entity, name, record FROM \(parked) WHERE direction = 'down' ORDER BY parked_at").map { row in
            let json: String? = row[2]
            return (row[0], row[1], json.flatMap { decode(CloudRecord.self, json: $0) })
        }
    }

    static func hasOrphans(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(parked) WHERE direction = 'down')")) ?? false
    }

    static func unpark(_ db: Database, entity: String, name: String, direction: String) throws {
        try db.cachedStatement(sql: "DELETE FROM \(parked) WHERE entity = ? AND name = ? AND direction = ?")
            .execute(arguments: [entity, name, direction])
    }

    // MARK: zones

    static func token(_ db: Database, zone: CloudZone) throws -> CloudChangeToken? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT token FROM \(self.zone) WHERE zone = ?"), arguments: [zone.description])
            .map(CloudChangeToken.init)
    }

    static func setToken(_ db: Database, zone: CloudZone, _ token: CloudChangeToken?) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(self.zone)(zone, token) VALUES (?, ?)")
            .execute(arguments: [zone.description, token?.rawValue])
    }

    static func dropToken(_ db: Database, zone: CloudZone) throws {
        try db.execute(sql: "DELETE FROM \(self.zone) WHERE zone = ?", arguments: [zone.description])
    }

    // MARK: counts, for status

    struct Counts: Sendable {
        var pending: Int
        var parked: Int
        var conflicts: Int
        var lastSync: String?
    }

    /// Local changes taken in and not uploaded yet (parked uploads not counted).
    static func pendingCount(_ db: Database) throws -> Int {
        try Int.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT count(*) FROM \(pending) AS p WHERE NOT EXISTS
                    (SELECT 1 FROM \(parked) AS k WHERE k.entity = p.entity AND k.name = p.name AND k.direction = 'up')
                    """)) ?? 0
    }

    static func counts(_ db: Database) throws -> Counts {
        Counts(
            pending: try pendingCount(db),
            parked: try Int.fetchOne(db, sql: "SELECT count(*) FROM \(parked)") ?? 0,
            conflicts: Int.fromDatabaseValue(try value(db, "conflicts")) ?? 0,
            lastSync: String.fromDatabaseValue(try value(db, "last_sync")))
    }
}
