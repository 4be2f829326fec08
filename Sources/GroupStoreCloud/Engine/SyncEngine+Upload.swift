import Foundation
import GRDB
import GroupStore
import Logging

extension SyncEngine {
    /// One prepared upload: the change, the pending entry it clears, and
    /// the row as it was read (to tell whether it changed meanwhile).
    struct Upload: Sendable {
        var change: CloudRecordChange
        var entry: SyncState.Pending
        var table: MappedTable
        var row: CloudFields?
    }

    /// Uploads everything pending, table by table (parents first); returns
    /// how many changes the remote accepted, and whether a conflict needs
    /// the server's version fetched first.
    /// `remoteReset`: the remote was found replaced or restored while
    /// uploading (its conflicts were left pending for after the listing).
    func uploadAll(summary: inout CloudSyncSummary) async throws -> (accepted: Int, refetch: Bool, remoteReset: Bool) {
        // What marks keys pending from here on (a save taken in while this
        // upload waits for the remote) is a reason for the next one.
        state.record(.uploadBegan)
        var accepted = 0
        var refetch = false
        var reset = false
        var ownWrites: [CloudRecordID] = []
        tables: for table in tables {
            while true {
                let batch = try takePrepared(table) ?? prepareUploads(table)
                if batch.uploads.isEmpty {
                    if batch.more && !batch.settled.isEmpty { continue } else { break }
                }
                try await uploadAssets(batch.assets)
                tracer.mark(.uploadPrepared)
                let results: [CloudModifyResult]
                (results, reset) = try await send(batch.uploads.map(\.change))
                tracer.mark(.uploadAnswered)
                var soFar = summary
                soFar.uploaded += accepted
                let outcome = try acknowledge(batch.uploads, results, remoteReset: reset, soFar: soFar)
                state.record(.gave(outcome.outcome.work))
                report(outcome.outcome, into: &summary)
                accepted += outcome.accepted
                // Found reset: the rest waits for its listing.
                if reset { break tables }
                for case .saved(let record) in results {
                    state.echoes.remember(record)
                    ownWrites.append(record.id)
                }
                if !outcome.outcome.parked.isEmpty { state.orphansMayExist = true }
                if outcome.outcome.refetch {
                    refetch = true
                    break
                }
                // A short batch all taken: nothing of this table is left to read.
                if !batch.more && outcome.accepted == batch.uploads.count { break }
            }
        }
        if accepted > 0 { events.emit(.uploaded(count: accepted)) }
        // Written here outside the subscription: uploaded, then no longer this group's to hold.
        if !subscription.isEmpty, !reset { try await moveOutOwnWrites(ownWrites, summary: &summary) }
        return (accepted, refetch, reset)
    }

    /// One batch to upload, as read from the pending keys.
    struct Batch: Sendable {
        var uploads: [Upload] = []
        var assets: [CloudAsset: [UInt8]] = [:]
        var settled: [SyncState.Pending] = []
        /// The batch was cut (by count or size), so more may be pending.
        var more = false
    }

    /// What preparing a batch needs of the engine, read before its transaction.
    struct Preparation: Sendable {
        var zone: @Sendable (MappedTable) -> CloudZone
        var codec: @Sendable (MappedTable) -> RowCodec
        var offset: TimeInterval
        var now: Date
        var store: GroupStore
        var intake: SaveIntake
        /// Through here the history is taken in (see ``SyncEngine/historyTakenIn``).
        var takenIn: Int64
    }

    func preparation(takenIn: Int64? = nil) -> Preparation {
        let (applier, account, configuration) = (self.applier, state.account, self.configuration)
        return Preparation(
            zone: { Self.zone(of: $0, account: account, configuration) }, codec: { applier.codec($0) }, offset: state.clockOffset,
            now: configuration.clock(), store: store, intake: intake, takenIn: takenIn ?? historyTakenIn)
    }

    /// The batch prepared when local saves were taken in, if it is of `table`.
    private func takePrepared(_ table: MappedTable) -> Batch? {
        guard let prepared = state.prepared, prepared.table == table.name else { return nil }
        state.prepared = nil
        return prepared.batch
    }

    /// Reads a batch of pending keys of `table` and what to send for each,
    /// in one write transaction (a sync runs only with keys pending, and a
    /// read transaction then a write one cost a second commit on the hop's
    /// path); see ``prepare(_:_:in:)``.
    private func prepareUploads(_ table: MappedTable) throws -> Batch {
        let preparation = self.preparation()
        return try writeDatabase { db in try Self.prepare(table, preparation, in: db) }
    }

    /// Reads a batch of pending keys of `table` and what to send for each,
    /// and records it (what goes up as sending); keys whose row equals its
    /// last acknowledged version (echoes of applied remote changes) or that
    /// never reached the remote are cleared. In the caller's write transaction.
    static func prepare(_ table: MappedTable, _ preparation: Preparation, in db: Database) throws -> Batch {
        let (store, intake, takenIn, now) = (preparation.store, preparation.intake, preparation.takenIn, preparation.now)
        // The commit time of a key's edit not taken in yet (not in its pending entry): from the history
        // after the intake; with the history pruned past it (unknown), now, as the apply dates an edit
        // it finds by value.
        let untaken = { () throws -> (String) -> Date? in
            guard let edits = try Self.untakenEdits(of: table, intake: intake, store: store, after: takenIn, in: db) else {
                return { _ in now }
            }
            return { edits[$0] }
        }
        let batch = try Self.readBatch(
            table, zone: preparation.zone(table), codec: preparation.codec(table), offset: preparation.offset, now: now, untaken: untaken,
            in: db)
        if !batch.settled.isEmpty || !batch.uploads.isEmpty { try Self.record(batch, in: db) }
        return batch
    }

    /// The keys of `table` that local commits after `position`, not taken
    /// in yet, changed: each with the latest commit time (as the intake
    /// will take it); `nil` when the history was pruned past `position`.
    private static func untakenEdits(
        of table: MappedTable, intake: SaveIntake, store: GroupStore, after position: Int64, in db: Database
    ) throws -> [String: Date]? {
        guard try store.hasChanges(db, after: position, byOtherThan: store.member) else { return [:] }
        let backlog = HistoryBacklog(store: store)
        var (edits, position, more) = ([String: Date](), position, true)
        while more {
            let page = try backlog.page(after: position, in: db)
            for save in page.saves {
                if save.kind == .resync { return nil }
                position = max(position, save.seq)
                guard save.author != intake.member else { continue }
                for change in save.changes where change.entity.lowercased() == table.name.lowercased() {
                    for key in change.inserted + change.updated + change.deleted {
                        guard let name = RecordName.name(of: key, shape: table.key) else { continue }
                        edits[name] = max(edits[name] ?? .distantPast, save.committedAt.addingTimeInterval(intake.clockSkew))
                    }
                }
            }
            more = page.hasMore && !page.saves.isEmpty
        }
        return edits
    }

    private static func readBatch(
        _ table: MappedTable, zone: CloudZone, codec: RowCodec, offset: TimeInterval, now: Date, untaken: () throws -> (String) -> Date?,
        in db: Database
    ) throws -> Batch {
        var batch = Batch()
        // Read once, for the first key that brings a version back.
        var untakenCommit: ((String) -> Date?)?
        var bytes = 0
        let entries = try SyncState.pendingBatch(db, entity: table.name, limit: maxBatchRecords)
        batch.more = entries.count == maxBatchRecords
        for entry in entries {
            let row = try codec.read(entry.name, in: db)
            let state = try SyncState.recordState(db, entity: table.name, name: entry.name)
            let id = CloudRecordID(zone: zone, type: table.name, name: entry.name)
            // A version the remote forgot goes up as a new record, all of it (``SyncState/RecordState/forgotten``).
            let base = state.flatMap { $0.forgotten ? nil : $0 }
            var editedAt = RecordApplier.editTime(entry, base, offset: offset, now: now)
            if let state, entry.restores != nil {
                if untakenCommit == nil { untakenCommit = try untaken() }
                // An edit not taken in yet is dated as the intake will date it.
                var edit = entry
                let committed = untakenCommit?(entry.name)
                if let committed { edit.editedAt = max(edit.editedAt, committed) }
                let untakenAt = committed.map { _ in RecordApplier.editTime(edit, nil, offset: offset, now: now) }
                editedAt = RecordApplier.restoringTime(editedAt, entry, state, row: row?.fields, untaken: untakenAt)
            }
            let change: CloudRecordChange
            switch (row, base) {
            case (nil, nil) where state != nil:
                // Deleted here since the remote forgot it: another group may have brought it back.
                change = .delete(id: id, baseTag: nil, editedAt: editedAt)
            case (nil, nil):
                batch.settled.append(entry)
                continue
            case (let row?, let state?) where RecordApplier.same(row.fields, state.ancestor):
                batch.settled.append(entry)
                continue
            case (nil, let state?):
                change = .delete(id: id, baseTag: state.tag, editedAt: editedAt)
            case (let row?, let state):
                var fields = row.fields
                if let ancestor = state?.ancestor {
                    fields = fields.filter { (ancestor[$0.key] ?? .null) != $0.value }
                }
                for case .asset(let asset) in fields.values { batch.assets[asset] = row.assets[asset.hash] }
                // A version brought back as a new record is created only where no delete was edited after it.
                change = .save(
                    id: id, baseTag: state?.tag, fields: fields, editedAt: editedAt, bringsBack: state == nil && entry.restores != nil)
            }
            if !batch.uploads.isEmpty && bytes + change.batchSize > maxBatchBytes {
                batch.more = true
                break
            }
            bytes += change.batchSize
            batch.uploads.append(Upload(change: change, entry: entry, table: table, row: row?.fields))
        }
        return batch
    }

    /// Clears the settled keys and records what goes up, before it is sent.
    private static func record(_ batch: Batch, in db: Database) throws {
        // By version: an entry that changed since it was read stays.
        for entry in batch.settled { try SyncState.clearPending(db, entry) }
        // What goes up is recorded first (see ``SyncState/Sent``).
        for upload in batch.uploads {
            let sent: SyncState.Sent = upload.row.map { .save($0) } ?? .delete
            try SyncState.markSending(db, entity: upload.table.name, name: upload.entry.name, sent)
        }
    }

    /// Uploads the assets the remote lacks, before the records naming them.
    private func uploadAssets(_ assets: [CloudAsset: [UInt8]]) async throws {
        guard !assets.isEmpty else { return }
        let hashes = assets.keys.map(\.hash)
        let missing = try await Retry.run(configuration, "check assets on \(remote.displayName)") {
            try await self.remote.missingAssets(hashes)
        }
        for (asset, bytes) in assets where missing.contains(asset.hash) {
            try await Retry.run(configuration, "upload asset \(asset.hash) to \(remote.displayName)") {
                try await self.remote.uploadAsset(asset, bytes: bytes)
            }
        }
    }

    /// Sends changes on condition that the remote's history still holds the
    /// latest change this group saw (checked by the remote in the same
    /// transaction), retrying transient failures and splitting a batch the
    /// remote finds too large. Returns the results of the changes applied
    /// (none when the remote was found reset first; of a split batch, its
    /// first part may be), and whether the remote was found reset.
    private func send(_ changes: [CloudRecordChange]) async throws -> (results: [CloudModifyResult], reset: Bool) {
        do {
            // Found reset before the changes (none applied), or, by a remote that cannot check in the
            // same transaction, after them: their conflicts and refusals are no edit to settle against,
            // nor a reason to park.
            let (answer, reset) = try await callKeepingMark("upload to \(remote.displayName)", history: \.history) {
                try await self.remote.modify(changes, keeping: $0)
            }
            guard answer.value != nil || reset else {
                throw CloudSyncError(
                    .badRemote, "\(remote.displayName) applied no change of an upload, and its history keeps this group's mark")
            }
            return (answer.value ?? [], reset)
        } catch let error as CloudSyncError where error.code == .batchTooLarge {
            guard changes.count > 1 else {
                return ([.refused(changes[0].id, reason: "too large for \(remote.displayName): \(error.message)")], false)
            }
            let half = changes.count / 2
            let first = try await send(Array(changes[..<half]))
            if first.reset { return first }
            let second = try await send(Array(changes[half...]))
            return (first.results + second.results, second.reset)
        }
    }

    /// Records what the remote did with each change, in one local
    /// transaction, and in it the sync so far as `last_sync` (with what moved
    /// of the sync state): the sync's end then writes nothing more when
    /// nothing moved after (``recordLastSync(_:failed:idle:)``).
    /// - Parameter soFar: the sync's summary before this batch.
    private func acknowledge(
        _ uploads: [Upload], _ results: [CloudModifyResult], remoteReset: Bool, soFar: CloudSyncSummary
    ) throws -> (accepted: Int, outcome: RecordApplier.Outcome) {
        let applier = self.applier
        let maxRounds = configuration.maxConflictRounds
        let offset = state.clockOffset
        let moved = state.moved
        let (accepted, outcome, recorded) = try writeStore { db -> (Int, RecordApplier.Outcome, CloudSyncSummary) in
            var outcome = RecordApplier.Outcome()
            outcome.clockOffset = offset
            var accepted = 0
            for (upload, result) in zip(uploads, results) {
                let table = upload.table
                let name = upload.entry.name
                let codec = applier.codec(table)
                switch result {
                // A local change made since the row was read comes as a save not taken in yet,
                // which marks the key pending again. Clearing by version is enough.
                case .saved(let record):
                    try SyncState.setRecord(db, entity: table.name, name: name, record: record)
                    try SyncState.clearPending(db, upload.entry)
                    accepted += 1
                case .deleted:
                    try SyncState.removeRecord(db, entity: table.name, name: name)
                    try SyncState.clearPending(db, upload.entry)
                    accepted += 1
                case .conflict(_, let server, _) where RecordApplier.same(upload.row, server?.fields):
                    // The remote already holds exactly what this upload sent: acknowledged, not a conflict.
                    try SyncState.adopt(db, entity: table.name, name: name, server)
                    try SyncState.clearPending(db, upload.entry)
                    accepted += 1
                case .conflict where remoteReset:
                    // Answered by a remote replaced or restored: the key stays pending, for after its listing.
                    try SyncState.clearSent(db, entity: table.name, name: name)
                case .conflict(_, let server, _)
                where try SyncState.inFlight(db, entity: table.name, name: name).contains { Self.isOwnUpload(server, sent: $0) }:
                    // An earlier upload of this group, taken by the remote before the member that sent it
                    // died: it becomes the acknowledged version, and this newer edit goes up on top of it.
                    try SyncState.adopt(db, entity: table.name, name: name, server)
                    try SyncState.clearSent(db, entity: table.name, name: name)
                case .conflict(_, let server, let deletedAt):
                    // Answered: the remote did not take it.
                    try SyncState.clearSent(db, entity: table.name, name: name)
                    let rounds = upload.entry.rounds + 1
                    if rounds > maxRounds {
                        try applier.park(
                            db, table, name, "up", "conflict did not settle after \(maxRounds) rounds with the remote", server, &outcome)
                        continue
                    }
                    let state = try SyncState.recordState(db, entity: table.name, name: name)
                    let client = try codec.read(name, in: db)
                    try SyncState.setRounds(db, entity: table.name, name: name, rounds: rounds)
                    let serverAssets =
                        server?.fields.values.compactMap { value -> String? in
                            if case .asset(let asset) = value { return asset.hash } else { return nil }
                        } ?? []
                    if serverAssets.contains(where: { client?.assets[$0] == nil }) {
                        // The server's version names assets not here: it is settled when fetched (with them).
                        outcome.refetch = true
                        continue
                    }
                    try applier.settle(
                        table, name, server: server, client: client, state: state, pending: upload.entry, assets: client?.assets ?? [:],
                        deletedAt: deletedAt, in: db, outcome: &outcome)
                case .refused where remoteReset:
                    // Refused by a remote replaced or restored (its type not prepared yet): pending, for after it is.
                    try SyncState.clearSent(db, entity: table.name, name: name)
                case .refused(_, let reason):
                    try applier.park(db, table, name, "up", reason, nil, &outcome)
                }
            }
            try applier.takeInConsequences(of: &outcome, store: store, in: db)
            var last = soFar
            last.uploaded += accepted
            last.conflicts += outcome.conflicts.count
            last.parked += outcome.parked.count
            last.finishedAt = Date()
            last.pending = try SyncState.pendingCount(db)
            try SyncState.setValue(db, "last_sync", last.stateJSON)
            try Self.store(moved, in: db)
            return (accepted, outcome, last)
        }
        state.stored(moved)
        state.lastSync.acknowledged = recorded
        return (accepted, outcome)
    }

    /// Whether the remote's version is exactly what an earlier upload sent.
    static func isOwnUpload(_ server: CloudRecord?, sent: SyncState.Sent) -> Bool {
        switch sent {
        case .delete: return server == nil
        case .save(let fields): return RecordApplier.same(fields, server?.fields)
        }
    }
}
