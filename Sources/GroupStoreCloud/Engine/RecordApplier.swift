import Foundation
import GRDB
import GroupStore

/// Writes remote records into the local tables and settles conflicts, inside
/// the bridge's write transactions (so the state it moves — tags, ancestors,
/// pending keys, tokens — commits with the rows).
struct RecordApplier: Sendable {
    let tables: [MappedTable]
    let codecs: [String: RowCodec]
    let policy: CloudConflictPolicy
    /// Tables with triggers of the app's: applying a row there may change it
    /// further, so applied keys are compared again before being taken as echoes.
    let triggered: Set<String>
    /// This host's clock, as the engine reads it (see ``CloudSyncConfiguration/clockSkew``).
    let clock: @Sendable () -> Date

    /// What an apply or an acknowledgement did.
    /// A record parked by an apply: its table, name, and why (`waits:` for a parent).
    typealias Parked = (table: String, record: String, reason: String)

    struct Outcome: Sendable {
        var applied = 0
        var conflicts: [(table: String, record: String, outcome: CloudConflictOutcome)] = []
        var parked: [Parked] = []
        /// Keys this transaction wrote on purpose (lower-cased table, name).
        var written: Set<RecordKey> = []
        /// A conflict needs the server's version fetched (with its assets) to be settled.
        var refetch = false
        /// Records are parked as orphans (so an applied one may have been one).
        var mayHaveOrphans = true
        /// What the transaction gave the upload (local edits found by value,
        /// records the remote forgot, conflicts this group's version won,
        /// what the transaction caused).
        var work = UploadWork()
        /// Local commits may exist that the intake has not taken in yet: a
        /// record without a pending entry is compared by value too (see
        /// ``localEdit(_:_:row:state:in:outcome:)``). When the history
        /// holds nothing after the intake but the bridge's own, a pending
        /// entry is the only sign of a local edit, and rows are not read.
        var editsUntaken = true
        /// The remote's clock less this host's: local edit times are moved
        /// onto the remote's clock by it before newer-edit-wins compares them.
        var clockOffset: TimeInterval = 0
        /// Records whose version here the remote forgot (it was replaced, or
        /// restored from an older copy): of a full listing, those held here
        /// at a tag the remote forgot; of any fetch, those deleted here at a
        /// tag it forgot. This group's version (or delete) goes up again on
        /// top of the remote's when that is no newer, instead of being
        /// rolled back to it (lower-cased table, name; see ``forgotHere``).
        var forgottenHere: Set<RecordKey> = []
        /// What was applied to the records of tables with app triggers: the
        /// remote's fields, and those it changed (see ``Applied``).
        var appliedFields: [RecordKey: Applied] = [:]
        /// Columns of the remote's records first found missing here (table, column).
        var drifts: [(table: String, column: String)] = []
        /// Rows removed because they left the subscription, by table.
        var movedOut: [String: Int] = [:]
        /// Pending keys exist (none when the apply began, and none marked
        /// since: no key is looked up).
        var pendingKept = true
        /// Tombstones are kept (none: a record never seen here is not looked up).
        var tombstonesKept = true
        /// The page applied is a full listing of its zone: a record deleted
        /// here that it holds at the tag it had then was brought back by a
        /// remote restored from an older copy, and is deleted there again.
        var listing = false
    }

    struct RecordKey: Hashable, Sendable {
        var table: String
        var name: String
    }

    /// Tables by exact name (how records and saves name them), then ignoring ASCII case.
    private let byName: [String: MappedTable]
    /// Each table's column names (lower-cased table name).
    let columnNames: [String: Set<String>]

    init(
        tables: [MappedTable], codecs: [String: RowCodec], policy: CloudConflictPolicy, triggered: Set<String>,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.tables = tables
        self.codecs = codecs
        self.policy = policy
        self.triggered = triggered
        self.clock = clock
        byName = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        columnNames = Dictionary(
            tables.map { ($0.name.lowercased(), Set($0.columns.map(\.name))) }, uniquingKeysWith: { first, _ in first })
    }

    func table(named name: String) -> MappedTable? {
        byName[name] ?? tables.first { $0.name.lowercased() == name.lowercased() }
    }

    func codec(_ table: MappedTable) -> RowCodec { codecs[table.name.lowercased()]! }

    /// The edit time of a local change on the remote's clock: its commit
    /// time moved by `offset` (the remote's clock less this host's), never
    /// later than the remote's now (`now`, on this host's clock), and raised
    /// above the version it edited (so a clock behind cannot lose to what it
    /// has seen) and above a version it brings back (``SyncState/Pending/restores``).
    /// A host whose clock is ahead claims no future, also when it settles a
    /// conflict itself.
    static func editTime(_ pending: SyncState.Pending?, _ state: SyncState.RecordState?, offset: TimeInterval, now: Date) -> Date {
        var time = min(pending?.editedAt ?? now, now).addingTimeInterval(offset)
        if let restores = pending?.restores { time = max(time, restores) }
        guard let state else { return time }
        return max(time, state.editedAt.addingTimeInterval(0.001))
    }

    /// The edit time what this group brings back has at least (``SyncState/Pending/restores``):
    /// the acknowledged version's for that version itself, 1 ms above it
    /// for a local edit on top of it (which may have been committed closer
    /// to it than that, and must not be taken for the same version).
    static func restoredTime(of row: RowCodec.LocalRow?, over state: SyncState.RecordState) -> Date {
        same(row?.fields, state.ancestor) ? state.editedAt : state.editedAt.addingTimeInterval(0.001)
    }

    /// The edit time of what goes up for a key that brings a version back
    /// (``SyncState/Pending/restores``), from `time` (``editTime(_:_:offset:now:)``):
    /// a row edited since the listing decided what it brings back is a
    /// later version, though its pending entry may not say so yet (its
    /// commit not taken in: the entry still holds the time of the version
    /// brought back). A version the remote forgot tells such an edit by its
    /// acknowledged values: it goes up at least 1 ms above that version.
    /// `untaken`, the edit time of a commit of this key not taken in yet
    /// (on the remote's clock), is the edit's own.
    static func restoringTime(
        _ time: Date, _ pending: SyncState.Pending, _ state: SyncState.RecordState, row: CloudFields?, untaken: Date?
    ) -> Date {
        guard pending.restores != nil else { return time }
        var time = time
        if state.forgotten, !same(row, state.ancestor) { time = max(time, state.editedAt.addingTimeInterval(0.001)) }
        if let untaken { time = max(time, untaken) }
        return time
    }

    /// Edit times closer than this are one version's (``CloudRecordChange/sameVersion``).
    static let sameVersion = CloudRecordChange.sameVersion

    /// Whether a row's fields equal `other` on the row's columns (a column
    /// the other side does not have counts as equal when the row holds NULL);
    /// `nil` (no row, a deleted record) equals only `nil`.
    static func same(_ row: CloudFields?, _ other: CloudFields?) -> Bool {
        guard let row, let other else { return row == nil && other == nil }
        for (column, value) in row where (other[column] ?? .null) != value { return false }
        return true
    }

    // MARK: fetched records

    func apply(_ record: CloudRecord, assets: [String: [UInt8]], in db: Database, outcome: inout Outcome) throws {
        guard let table = table(named: record.id.type) else { return }
        let name = record.id.name
        guard RecordName.keyValues(of: name, shape: table.key) != nil else {
            try park(db, table, name, "down", "record name \(name) cannot be a key of table \(table.name)", record, &outcome)
            return
        }
        let state = try SyncState.recordState(db, entity: table.name, name: name)
        if let state, state.tag == record.tag, !outcome.listing || Self.same(state.ancestor, record.fields) {
            if outcome.mayHaveOrphans { try SyncState.unpark(db, entity: table.name, name: name, direction: "down") }
            return
        }
        if try forgotHere(table, name, record, state: state, in: db, outcome: &outcome) { return }
        let codec = codec(table)
        let mayBeEdited =
            try outcome.editsUntaken
            || ((outcome.pendingKept || outcome.work.keys > 0) && SyncState.pendingEntry(db, entity: table.name, name: name) != nil)
        let client = mayBeEdited ? try codec.read(name, in: db) : nil
        if mayBeEdited, let pending = try localEdit(table, name, row: client, state: state, in: db, outcome: &outcome) {
            let own = try SyncState.inFlight(db, entity: table.name, name: name).contains { sent in
                if case .save(let fields) = sent { return Self.same(fields, record.fields) }
                return false
            }
            if own {
                // This group's own upload, taken by the remote before the member that sent it died:
                // it becomes the acknowledged version; a later local edit stays pending on top of it.
                try SyncState.setRecord(db, entity: table.name, name: name, record: record)
                try SyncState.clearSent(db, entity: table.name, name: name)
                if Self.same(client?.fields, record.fields) { try SyncState.clearPending(db, pending) }
                return
            }
            // A version the remote forgot differs from whatever it holds, edited here or not (see ``settle``).
            let changedHere =
                state?.forgotten == true
                || (client.map { row in state.map { !Self.same(row.fields, $0.ancestor) } ?? true } ?? (state != nil))
            if changedHere {
                try settle(
                    table, name, server: record, client: client, state: state, pending: pending, assets: assets, in: db, outcome: &outcome)
                return
            }
        }
        try noteDrift(table, record, in: db, outcome: &outcome)
        // One statement: a constraint failure undoes it alone (SQLite's statement rollback), the transaction goes on.
        // Only the columns whose values differ are written (an app's `AFTER UPDATE OF col` fires only when col changed).
        do {
            // Not edited here and never synced: no row of that key (every local row is synced, pending, or
            // committed after the intake), so none is read and the record is written whole.
            let current = mayBeEdited || state == nil ? client : try codec.read(name, in: db)
            try write(table, name, record.fields, over: current, assets: assets, in: db)
            if triggered.contains(table.name.lowercased()) {
                outcome.appliedFields[RecordKey(table: table.name.lowercased(), name: name)] = Applied(
                    fields: record.fields, changed: Set(record.fields.keys.filter { record.fields[$0] != (state?.ancestor[$0] ?? .null) }))
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            try park(db, table, name, "down", "waits: \(error.message ?? "constraint failed") in \(table.name)", record, &outcome)
            return
        } catch let error as CloudSyncError where error.code == .badRemote {
            // An asset the remote did not give: the record waits for it.
            try park(db, table, name, "down", "waits: \(error.message)", record, &outcome)
            return
        }
        try SyncState.setRecord(db, entity: table.name, name: name, record: record)
        if outcome.mayHaveOrphans { try SyncState.unpark(db, entity: table.name, name: name, direction: "down") }
        outcome.applied += 1
        outcome.written.insert(RecordKey(table: table.name.lowercased(), name: name))
    }

    /// Whether `record` is older than what this group acknowledged, after the
    /// remote was replaced or restored from an older copy: in a full listing,
    /// this group's version is one the remote forgot (``Outcome/forgottenHere``)
    /// and the remote's was not edited after it (another group may have
    /// brought a later version back: that one is applied as any remote
    /// change); or the record was deleted here at the tag it has (a listing),
    /// or at a tag the remote forgot and at an edit time no earlier than
    /// its. Then the remote's version becomes the base, and what this group
    /// holds — its version, its delete, or a record it created again since
    /// the delete — goes up again on top of it, keeping its place by edit
    /// time (``SyncState/Pending/restores``); nothing acknowledged is rolled
    /// back.
    private func forgotHere(
        _ table: MappedTable, _ name: String, _ record: CloudRecord, state: SyncState.RecordState?, in db: Database,
        outcome: inout Outcome
    ) throws -> Bool {
        let key = RecordKey(table: table.name.lowercased(), name: name)
        let restores: Date
        if let state {
            guard outcome.listing, outcome.forgottenHere.contains(key),
                record.editedAt.timeIntervalSince(state.editedAt) <= Self.sameVersion
            else { return false }
            restores = try Self.restoredTime(of: codec(table).read(name, in: db), over: state)
        } else {
            guard outcome.tombstonesKept, let tombstone = try SyncState.tombstone(db, entity: table.name, name: name) else { return false }
            let deletedAt = tombstone.editedAt.map { $0.addingTimeInterval(0.001) }
            let olderThanTheDelete = deletedAt.map { outcome.forgottenHere.contains(key) && record.editedAt < $0 } ?? false
            // Deleted here while the remote had forgotten the version (no tag): the delete went up without
            // one, and left nothing on a remote that lacked the record. That version (or an older one),
            // brought back since by another group, is older than the delete, and is deleted again.
            let broughtBackAfterTheDelete = tombstone.tag.isEmpty && (deletedAt.map { record.editedAt < $0 } ?? false)
            guard (outcome.listing && tombstone.tag == record.tag) || olderThanTheDelete || broughtBackAfterTheDelete else { return false }
            restores = deletedAt ?? record.editedAt.addingTimeInterval(0.001)
        }
        try SyncState.setRecord(db, entity: table.name, name: name, record: record)
        try outcome.work.markPending(
            db, entity: table.name, name: name, editedAt: restores.addingTimeInterval(-outcome.clockOffset), restores: restores)
        return true
    }

    func applyDelete(_ id: CloudRecordID, in db: Database, outcome: inout Outcome) throws {
        guard let table = table(named: id.type) else { return }
        let name = id.name
        if outcome.mayHaveOrphans { try SyncState.unpark(db, entity: table.name, name: name, direction: "down") }
        // Never synced here: a local row of that name is new, and stays.
        guard let state = try SyncState.recordState(db, entity: table.name, name: name) else { return }
        let codec = codec(table)
        let mayBeEdited = try outcome.editsUntaken || SyncState.pendingEntry(db, entity: table.name, name: name) != nil
        let client = mayBeEdited ? try codec.read(name, in: db) : nil
        if mayBeEdited, let pending = try localEdit(table, name, row: client, state: state, in: db, outcome: &outcome) {
            if try SyncState.inFlight(db, entity: table.name, name: name).contains(.delete) {
                // This group's own delete, taken by the remote before the member that sent it died.
                try SyncState.removeRecord(db, entity: table.name, name: name)
                if client == nil {
                    try SyncState.clearPending(db, pending)
                } else {
                    try SyncState.clearSent(db, entity: table.name, name: name)
                }
                return
            }
            // A version the remote forgot is brought back, edited here or not (see ``settle``).
            if client == nil || !Self.same(client?.fields, state.ancestor) || state.forgotten {
                try settle(table, name, server: nil, client: client, state: state, pending: pending, assets: [:], in: db, outcome: &outcome)
                return
            }
        }
        do {
            try codec.delete(name, in: db)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            // Rows here still reference it (a child added while it was deleted elsewhere, through a foreign
            // key with no ON DELETE action): the child keeps its parent alive. The row stays, and goes up
            // again as a new record; the groups that deleted it get it back, and their waiting child with it.
            try keepAlive(table, name, in: db, outcome: &outcome)
            return
        }
        try SyncState.removeRecord(db, entity: table.name, name: name)
        outcome.applied += 1
        outcome.written.insert(RecordKey(table: table.name.lowercased(), name: name))
    }

    /// Applies orphans whose parents have arrived, until no more can be.
    func retryOrphans(assets: [String: [UInt8]], in db: Database, outcome: inout Outcome) throws {
        guard outcome.mayHaveOrphans else { return }
        var progress = true
        while progress {
            progress = false
            for orphan in try SyncState.orphans(db) {
                let before = outcome.applied
                var attempt = outcome
                attempt.parked = []
                if let record = orphan.record {
                    try apply(record, assets: assets, in: db, outcome: &attempt)
                } else if let state = try SyncState.recordState(db, entity: orphan.entity, name: orphan.name),
                    let zone = CloudZone(description: state.zone)
                {
                    // A delete that waited (children held the row).
                    try applyDelete(CloudRecordID(zone: zone, type: orphan.entity, name: orphan.name), in: db, outcome: &attempt)
                } else {
                    try SyncState.unpark(db, entity: orphan.entity, name: orphan.name, direction: "down")
                    continue
                }
                outcome.applied = attempt.applied
                outcome.conflicts = attempt.conflicts
                outcome.written = attempt.written
                outcome.appliedFields = attempt.appliedFields
                outcome.drifts = attempt.drifts
                outcome.work = attempt.work
                if attempt.applied > before { progress = true }
            }
        }
    }

    // MARK: conflicts

    /// Settles a conflict by the policy: writes the result here, records the
    /// server's version as the new ancestor, and keeps the key pending when
    /// the result still differs from the server's.
    /// - Parameter deletedAt: when the server deleted the record (`server`
    ///   `nil`), the delete's edit time if the remote gave it.
    func settle(
        _ table: MappedTable, _ name: String, server: CloudRecord?, client: RowCodec.LocalRow?,
        state: SyncState.RecordState?, pending: SyncState.Pending?, assets: [String: [UInt8]], deletedAt: Date? = nil, in db: Database,
        outcome: inout Outcome
    ) throws {
        // Both sides already agree (an upload the remote took before this
        // member died, sent again; or the same edit made on both sides): not a conflict.
        if Self.same(client?.fields, server?.fields) {
            try SyncState.adopt(db, entity: table.name, name: name, server)
            try SyncState.clearPending(db, entity: table.name, name: name)
            return
        }
        // The remote holds what this group acknowledged, under another tag (another group uploaded it
        // again after the remote was restored from an older copy): no edit of the remote's meets this
        // one, whatever the policy. The remote's version becomes the base, and this group's edit stays
        // pending, to go up on top of it (reported as a conflict this group's version won).
        if let server, let state, server.tag != state.tag, Self.same(server.fields, state.ancestor),
            Self.same(state.ancestor, server.fields)
        {
            try SyncState.setRecord(db, entity: table.name, name: name, record: server)
            if pending == nil { try outcome.work.markPending(db, entity: table.name, name: name, editedAt: clock()) }
            try keptHere(table, name, in: db, outcome: &outcome)
            return
        }
        // The remote's version is no newer than one this group acknowledged and brings back (another group
        // brought the same or an older one back first, after the remote was replaced or restored): it is
        // the base, not an edit, and this group's version goes up on top of it, whatever the policy.
        if let server, let restores = pending?.restores, server.editedAt.timeIntervalSince(restores) <= Self.sameVersion {
            try SyncState.setRecord(db, entity: table.name, name: name, record: server)
            try keptHere(table, name, in: db, outcome: &outcome)
            return
        }
        // The remote deleted the record after it forgot the version this group brings back: another group
        // deleted it since, or deleted an older copy of it again. Ordered by edit time as versions brought
        // back are: a delete edited after the version this group holds wins, whatever the policy; one no
        // later than it (within ``sameVersion``), or whose time the remote does not give, does not, and the
        // version brought back goes up again as a new record.
        var deleteWins = false
        if server == nil, pending?.restores != nil, client != nil {
            let held = Self.editTime(pending, nil, offset: outcome.clockOffset, now: clock())
            if CloudRecordChange.deleteIsLater(deletedAt, than: held) {
                deleteWins = true
            } else {
                if state != nil { try SyncState.forgetTag(db, entity: table.name, name: name) }
                try keptHere(table, name, in: db, outcome: &outcome)
                return
            }
        }
        // What this group brings back is the version it acknowledged, unedited here, and the remote's was
        // edited after it: a later version (another group brought it back first, or edited it since), not
        // an edit that meets one of this group's; it is taken whatever the policy.
        let laterThanRestored =
            if let server, let restores = pending?.restores, let state, state.forgotten, Self.same(client?.fields, state.ancestor) {
                server.editedAt.timeIntervalSince(restores) > Self.sameVersion
            } else { false }
        let conflict = CloudConflict(
            table: table.name, recordName: name, server: server?.fields, client: client?.fields, ancestor: state?.ancestor,
            serverEditedAt: server?.editedAt, clientEditedAt: Self.editTime(pending, state, offset: outcome.clockOffset, now: clock()))
        let (result, kind) =
            laterThanRestored || deleteWins ? (server?.fields, .server) : ConflictResolver.resolve(conflict, policy: policy)
        let codec = codec(table)
        var available = assets
        for (hash, bytes) in client?.assets ?? [:] { available[hash] = bytes }
        if !Self.same(result, client?.fields) {
            do {
                if let result {
                    try write(table, name, result, over: client, assets: available, in: db)
                } else {
                    try codec.delete(name, in: db)
                }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                // The result cannot be written yet (its parent is missing, or children hold it): it waits, still pending.
                try park(
                    db, table, name, "down", "conflict result waits: \(error.message ?? "constraint failed") in \(table.name)", server,
                    &outcome)
                return
            }
        }
        try SyncState.adopt(db, entity: table.name, name: name, server)
        if outcome.mayHaveOrphans { try SyncState.unpark(db, entity: table.name, name: name, direction: "down") }
        if Self.same(result, server?.fields) {
            try SyncState.clearPending(db, entity: table.name, name: name)
        }
        try count(kind, table, name, in: db, outcome: &outcome)
        outcome.written.insert(RecordKey(table: table.name.lowercased(), name: name))
    }

    /// Counts a conflict settled as `kind` (in the sync state and the outcome).
    func count(_ kind: CloudConflictOutcome, _ table: MappedTable, _ name: String, in db: Database, outcome: inout Outcome) throws {
        try db.execute(sql: "UPDATE \(SyncState.meta) SET value = value + 1 WHERE key = 'conflicts'")
        outcome.conflicts.append((table.name, name, kind))
    }

    /// A conflict this group's version won without being written: it stays
    /// pending, to go up on top of the remote's.
    private func keptHere(_ table: MappedTable, _ name: String, in db: Database, outcome: inout Outcome) throws {
        try count(.client, table, name, in: db, outcome: &outcome)
        outcome.work.owePending()
    }

    func park(
        _ db: Database, _ table: MappedTable, _ name: String, _ direction: String, _ reason: String, _ record: CloudRecord?,
        _ outcome: inout Outcome
    ) throws {
        try SyncState.park(db, entity: table.name, name: name, direction: direction, reason: reason, record: record)
        if direction == "down" { outcome.mayHaveOrphans = true }
        outcome.parked.append((table.name, name, reason))
    }

    // MARK: what the transaction caused

    /// Marks pending every synced key this transaction changed beyond what
    /// it wrote on purpose (foreign-key cascades, the app's triggers), and
    /// the purposely written keys of tables with triggers (compared by value
    /// before upload: an unchanged row is an echo and is not uploaded).
    /// - Parameter store: the store whose write transaction this is.
    func takeInConsequences(of outcome: inout Outcome, store: GroupStore, in db: Database) throws {
        let now = clock()
        let changes = try store.openTransactionChanges(db)
        // A delete applied here may cascade into a row this same apply wrote
        // (a child updated, then its parent deleted): such a row is checked
        // by value, not skipped as written.
        let mayCascade = changes.contains { !$0.deleted.isEmpty }
        var reported: Set<RecordKey> = []
        for change in changes {
            guard let table = table(named: change.entity) else { continue }
            let lower = table.name.lowercased()
            for key in change.inserted + change.updated + change.deleted {
                guard let name = RecordName.name(of: key, shape: table.key) else { continue }
                let recordKey = RecordKey(table: lower, name: name)
                if mayCascade { reported.insert(recordKey) }
                if outcome.written.contains(recordKey) && !triggered.contains(lower) {
                    guard mayCascade, try !matchesAcknowledged(table, name, in: db) else { continue }
                }
                if let applied = outcome.appliedFields[recordKey] {
                    // An app trigger may have changed the applied row: a loop between groups is stopped.
                    guard try derivedChange(table, name, applied, in: db, outcome: &outcome) else { continue }
                }
                try outcome.work.markPending(db, entity: table.name, name: name, editedAt: now)
            }
        }
        // A row this apply inserted and a cascade then deleted folds into nothing in the history
        // (inserted then deleted): it is checked by value too, or it would stay recorded as held.
        guard mayCascade else { return }
        for key in outcome.written where !reported.contains(key) {
            guard let table = table(named: key.table), try !matchesAcknowledged(table, key.name, in: db) else { continue }
            try outcome.work.markPending(db, entity: table.name, name: key.name, editedAt: now)
        }
    }

    /// Whether the row named `name` is what the remote acknowledged (no row
    /// and no record count as the same).
    func matchesAcknowledged(_ table: MappedTable, _ name: String, in db: Database) throws -> Bool {
        let state = try SyncState.recordState(db, entity: table.name, name: name)
        return Self.same(try codec(table).read(name, in: db)?.fields, state?.ancestor)
    }
}
