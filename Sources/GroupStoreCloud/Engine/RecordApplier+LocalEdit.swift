import Foundation
import GRDB

extension RecordApplier {
    /// The local edit of record `name` that the remote has not seen, if
    /// any: its pending entry, or one made now for an edit found by value.
    ///
    /// Why by value: a local commit reaches the bridge as a save a little
    /// later (its member's delivery lags the commit by a millisecond or so,
    /// more under load), and an apply must not overwrite an edit in that
    /// window: a fetched record meets every committed local edit as a
    /// conflict, whether its save was taken in or not. The apply's write
    /// transaction sees every committed row, so an edit not taken in yet
    /// shows as a row that differs from its last acknowledged values, a row
    /// with no record state (a local insert), or no row where a record state
    /// exists (a local delete). Such an edit is made pending here, in the
    /// apply's transaction, with the apply's clock as its edit time: it was
    /// committed at most the delivery lag earlier (the save that brings it
    /// later keeps the later of the two times), so newer-edit-wins can
    /// misjudge only edits made within that lag of each other; client-wins
    /// and field-merge do not use the time.
    func localEdit(
        _ table: MappedTable, _ name: String, row: RowCodec.LocalRow?, state: SyncState.RecordState?, in db: Database,
        outcome: inout Outcome
    ) throws -> SyncState.Pending? {
        if let pending = try SyncState.pendingEntry(db, entity: table.name, name: name) { return pending }
        guard outcome.editsUntaken else { return nil }
        let edited: Bool
        switch (row, state) {
        case (nil, nil): edited = false
        case (let row?, let state?): edited = !Self.same(row.fields, state.ancestor)
        case (.some, nil), (nil, .some): edited = true
        }
        guard edited else { return nil }
        try outcome.work.markPending(db, entity: table.name, name: name, editedAt: clock())
        return try SyncState.pendingEntry(db, entity: table.name, name: name)
    }

    /// Whether record `id` has a local edit the remote has not seen (see
    /// ``localEdit(_:_:row:state:in:outcome:)``, which makes it pending).
    func hasLocalEdit(_ id: CloudRecordID, in db: Database) throws -> Bool {
        guard let table = table(named: id.type) else { return false }
        let state = try SyncState.recordState(db, entity: table.name, name: id.name)
        let row = try codec(table).read(id.name, in: db)
        var outcome = Outcome()
        return try localEdit(table, id.name, row: row, state: state, in: db, outcome: &outcome) != nil
    }
}
