import Foundation
import GRDB

/// What a transaction gave the upload to do: keys made pending, tables
/// marked to be compared in full, pending keys owed another upload.
///
/// It is the one way either is written: the SQL that makes a key pending or
/// marks a table for a diff lives here and nowhere else, so every producer
/// (the intake, an apply, a conflict settled, a diff, a remote that forgot
/// records) hands its work to the engine with the outcome of its
/// transaction, and the engine turns it into the reason that wakes the
/// upload in one place (``EngineState/record(_:)``).
struct UploadWork: Sendable, Equatable {
    /// Keys made pending, or pending keys owed another upload.
    private(set) var keys = 0
    /// Tables marked to be compared in full.
    private(set) var tables = 0

    var isEmpty: Bool { keys == 0 && tables == 0 }

    /// Marks a key as changed locally (a newer edit time wins; the version
    /// moves so an upload in flight does not clear it). `restores`: the key
    /// brings back a version this group acknowledged (see ``SyncState/Pending/restores``);
    /// the latest such time is kept, also through later local edits.
    mutating func markPending(_ db: Database, entity: String, name: String, editedAt: Date, restores: Date? = nil) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO \(SyncState.pending)(entity, name, edited_at, restores) VALUES (?, ?, ?, ?)
                ON CONFLICT (entity, name) DO UPDATE SET edited_at = max(edited_at, excluded.edited_at), version = version + 1, rounds = 0,
                    restores = CASE WHEN excluded.restores IS NULL THEN restores WHEN restores IS NULL THEN excluded.restores
                        ELSE max(restores, excluded.restores) END
                """
        ).execute(arguments: [entity, name, editedAt.timeIntervalSince1970, restores?.timeIntervalSince1970])
        // A new edit gets another chance upstream.
        try db.cachedStatement(sql: "DELETE FROM \(SyncState.parked) WHERE entity = ? AND name = ? AND direction = 'up'").execute(
            arguments: [entity, name])
        keys += 1
    }

    /// A key already pending is owed another upload (a conflict this
    /// group's version won goes up on top of the remote's).
    mutating func owePending() {
        keys += 1
    }

    /// Marks a table to be compared in full with its last synced state.
    mutating func markForDiff(_ db: Database, entity: String) throws {
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(SyncState.diff)(entity) VALUES (?)").execute(arguments: [entity])
        tables += 1
    }

    /// Adds what another part of the same transaction gave.
    mutating func add(_ other: UploadWork) {
        keys += other.keys
        tables += other.tables
    }
}
