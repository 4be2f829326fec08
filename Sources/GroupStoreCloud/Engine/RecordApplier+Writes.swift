import Foundation
import GRDB

/// How an apply writes a row, and what it watches while doing so: the
/// columns that differ only, a parent kept alive by its children, columns
/// of the remote's records a table here lacks, and changes an app trigger
/// derives from an applied row (stopped when they loop between groups).
extension RecordApplier {
    /// What an apply wrote to a record of a table with app triggers.
    struct Applied: Sendable {
        /// The remote's fields.
        var fields: CloudFields
        /// The fields the remote changed since the version acknowledged here.
        var changed: Set<String>
    }

    /// After this many rounds in a row of a record coming back from the
    /// remote and an app trigger here changing it again (the columns this
    /// group's last round changed, and only those), the loop is stopped.
    static let derivedLoopLimit = 10

    /// Writes `fields` to the row named `name`: every field for a new row;
    /// for a row that is there (`current`), only the columns whose values
    /// differ, and nothing when none does.
    func write(
        _ table: MappedTable, _ name: String, _ fields: CloudFields, over current: RowCodec.LocalRow?, assets: [String: [UInt8]],
        in db: Database
    ) throws {
        guard let current else {
            try codec(table).upsert(name, fields: fields, assets: assets, in: db)
            return
        }
        let changed = fields.filter { column, value in current.fields[column].map { $0 != value } ?? false }
        guard !changed.isEmpty else { return }
        try codec(table).upsert(name, fields: changed, assets: assets, existing: true, in: db)
    }

    /// A record this group holds goes up again: one the remote forgot
    /// (`keepingItsPlace`: what was acknowledged stays, under no tag, as the
    /// base a local edit is told by, and the upload keeps its place by that
    /// version's edit time, ``SyncState/Pending/restores``), or one kept from
    /// a zone left, which goes up as a new record. A record with no state
    /// here goes up as new either way.
    func uploadAgain(
        _ id: CloudRecordID, keepingItsPlace: Bool, clockOffset: TimeInterval, now: Date, in db: Database, work: inout UploadWork
    ) throws {
        if keepingItsPlace, let table = table(named: id.type), let held = try SyncState.recordState(db, entity: id.type, name: id.name) {
            let restores = Self.restoredTime(of: try codec(table).read(id.name, in: db), over: held)
            try SyncState.forgetTag(db, entity: id.type, name: id.name)
            try work.markPending(
                db, entity: id.type, name: id.name, editedAt: restores.addingTimeInterval(-clockOffset), restores: restores)
        } else {
            try SyncState.removeRecord(db, entity: id.type, name: id.name)
            try work.markPending(db, entity: id.type, name: id.name, editedAt: now)
        }
    }

    /// A remote delete of a row that rows here still reference (a foreign
    /// key with no ON DELETE action): the child keeps its parent alive. The
    /// row stays and goes up again as a new record (the remote deleted it);
    /// reported as a conflict this group's version won.
    func keepAlive(_ table: MappedTable, _ name: String, in db: Database, outcome: inout Outcome) throws {
        try SyncState.removeRecord(db, entity: table.name, name: name)
        try outcome.work.markPending(db, entity: table.name, name: name, editedAt: clock())
        try SyncState.unpark(db, entity: table.name, name: name, direction: "down")
        try count(.client, table, name, in: db, outcome: &outcome)
    }

    /// Notes the fields of `record` for columns the table here lacks (a
    /// column another group added or renamed, or this one dropped): they stay
    /// on the remote and are not applied here; each is reported once.
    func noteDrift(_ table: MappedTable, _ record: CloudRecord, in db: Database, outcome: inout Outcome) throws {
        let columns = columnNames[table.name.lowercased()] ?? []
        for column in record.fields.keys where !columns.contains(column) {
            if try SyncState.noteDrift(db, entity: table.name, column: column) {
                outcome.drifts.append((table.name, column))
            }
        }
    }

    /// Whether an app trigger changed the row just applied from `applied`
    /// (it is then uploaded), counting the rounds of a loop: a record that
    /// comes back changed in the columns this group's trigger changed last
    /// time, and only those, and that the trigger changes again, is one more
    /// round; past ``derivedLoopLimit`` the change stays here, parked with
    /// the reason, instead of going up.
    func derivedChange(_ table: MappedTable, _ name: String, _ applied: Applied, in db: Database, outcome: inout Outcome) throws -> Bool {
        let row = try codec(table).read(name, in: db)?.fields ?? [:]
        let derived = Set(row.keys.filter { row[$0] != (applied.fields[$0] ?? .null) })
        let entity = table.name
        guard !derived.isEmpty else {
            try db.execute(
                sql: "UPDATE \(SyncState.record) SET derived = 0, derived_columns = NULL WHERE entity = ? AND name = ? AND derived <> 0",
                arguments: [entity, name])
            return try !matchesAcknowledged(table, name, in: db)
        }
        let last = try Row.fetchOne(
            db, sql: "SELECT derived, derived_columns FROM \(SyncState.record) WHERE entity = ? AND name = ?", arguments: [entity, name])
        let lastRounds: Int = last.flatMap { $0[0] as Int? } ?? 0
        let previous = Set((last.flatMap { $0[1] as String? } ?? "").split(separator: "\t").map(String.init))
        // One more round of a loop: the remote changed only what this group's trigger changed last time.
        let rounds = lastRounds > 0 && !applied.changed.isEmpty && applied.changed.isSubset(of: previous) ? lastRounds + 1 : 1
        try db.execute(
            sql: "UPDATE \(SyncState.record) SET derived = ?, derived_columns = ? WHERE entity = ? AND name = ?",
            arguments: [rounds, derived.sorted().joined(separator: "\t"), entity, name])
        guard rounds > Self.derivedLoopLimit else { return true }
        try park(
            db, table, name, "up",
            "a loop between groups: each time this record comes back from the remote, an app trigger here changes \(derived.sorted().joined(separator: ", ")) again (\(rounds) rounds); the change stays here, not uploaded (fix the trigger, then cloud sync --complete)",
            nil, &outcome)
        return false
    }
}
