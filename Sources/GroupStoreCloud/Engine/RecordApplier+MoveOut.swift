import Foundation
import GRDB

extension RecordApplier {
    /// Removes record `id` here because it left this group's subscription
    /// (see ``CloudSubscription``): the row goes, with its sync state, and
    /// nothing is uploaded (the record is still on the remote). Returns
    /// whether it was removed.
    ///
    /// The rules, each decided here once:
    /// - A record with a local edit the remote has not seen stays: the edit
    ///   is uploaded (never lost), and the upload's acknowledgement asks
    ///   again whether it is in the subset (``SyncEngine/moveOutOwnWrites``).
    /// - A record that a row here references through a foreign key (a
    ///   child in the subset, whose parent is not) stays, as last synced,
    ///   while it is referenced: removing it would delete or orphan the
    ///   child, or be refused. It is no longer updated (it is out of the
    ///   subset); subscribe the parent table to the parents your children
    ///   need to keep them current.
    /// - A record never synced here (no sync state) is this group's new row
    ///   and stays.
    @discardableResult
    func moveOut(_ id: CloudRecordID, in db: Database, outcome: inout Outcome) throws -> Bool {
        guard let table = table(named: id.type) else { return false }
        let name = id.name
        if outcome.mayHaveOrphans { try SyncState.unpark(db, entity: table.name, name: name, direction: "down") }
        guard let state = try SyncState.recordState(db, entity: table.name, name: name) else { return false }
        let codec = codec(table)
        let row = try codec.read(name, in: db)
        if try localEdit(table, name, row: row, state: state, in: db, outcome: &outcome) != nil { return false }
        guard row != nil else {
            try SyncState.removeRecord(db, entity: table.name, name: name)
            return false
        }
        // Referenced by a row here: it stays, as last synced, while it is.
        if try codec.isReferenced(name, in: db) { return false }
        do {
            try codec.delete(name, in: db)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            return false
        }
        try SyncState.removeRecord(db, entity: table.name, name: name)
        outcome.applied += 1
        outcome.movedOut[table.name, default: 0] += 1
        outcome.written.insert(RecordKey(table: table.name.lowercased(), name: name))
        return true
    }
}
