import Foundation
import GRDB
import GroupStore
import Logging

extension SyncEngine {
    /// Fetches every zone; returns how many records were applied.
    func fetchAll(summary: inout CloudSyncSummary) async throws -> Int {
        // What the fetch applies may change the rows a prepared batch read: it is read again.
        state.prepared = nil
        var applied = 0
        // Shared zones this group synced before and no longer does (its shared zone was
        // changed): they come only from an earlier configuration, so once per engine.
        if state.setupLeft.contains(.leaveStaleZones) {
            let current = Set(zones.map(\.description))
            let stale = try readDatabase { db in
                try String.fetchAll(
                    db,
                    sql:
                        "SELECT zone FROM \(SyncState.record) WHERE zone LIKE 'shared/%' UNION SELECT zone FROM \(SyncState.zone) WHERE zone LIKE 'shared/%'"
                )
            }.filter { !current.contains($0) }.compactMap(CloudZone.init(description:))
            for zone in stale { applied += try await leave(zone, because: "this group no longer syncs it", summary: &summary) }
            state.setupLeft.remove(.leaveStaleZones)
        }
        var restarts = 0
        while true {
            do {
                for zone in zones { applied += try await fetch(zone, summary: &summary) }
                break
            } catch is RemoteFoundReset {
                // Every zone is listed again, on a remote whose types are prepared again.
                restarts += 1
                guard restarts <= configuration.maxConflictRounds else {
                    throw CloudSyncError(
                        .transient,
                        "\(remote.displayName) was found replaced or restored \(restarts) times in one sync; the next sync lists it again")
                }
                try await prepareRemoteIfAsked()
            }
        }
        // Every echo of what was acknowledged before this fetch came back in it.
        state.echoes.forget()
        if applied > 0 { events.emit(.fetched(count: applied)) }
        return applied
    }

    /// Fetches one zone since its token, page by page; each page is applied
    /// with the token after it in one local transaction. An expired token (or
    /// none) lists the whole zone: local records the listing lacks were
    /// deleted remotely, and the token is saved with the last page only.
    private func fetch(_ zone: CloudZone, summary: inout CloudSyncSummary) async throws -> Int {
        var token: CloudChangeToken?
        if let known = state.tokens[zone]?.value {
            token = known
        } else {
            token = try readDatabase { try SyncState.token($0, zone: zone) }
            state.tokens[zone] = .stored(token)
        }
        let subscription = self.subscription(of: zone)
        var listing = token == nil
        // Whether this group held records when the listing began: if not, none it lists can be
        // held here at a version the remote forgot (those applied from its pages are the remote's own).
        var heldBeforeListing = try listing && readDatabase { try SyncState.hasRecords($0) }
        var seen: Set<String> = []
        var applied = 0
        var parked: [RecordApplier.Parked] = []
        while true {
            let batch: CloudChangeBatch
            do {
                let since = token
                tracer.mark(.fetchSent)
                let (answer, reset) = try await callKeepingMark("fetch \(zone) from \(remote.displayName)", history: \.history) {
                    try await self.remote.fetchChanges(
                        in: zone, since: since, limit: Self.fetchPageSize, keeping: $0, subscription: subscription)
                }
                // A remote replaced or restored is found before anything of it is applied: the listing
                // then brings back what it forgot instead of taking its older versions.
                if reset { throw RemoteFoundReset() }
                guard let page = answer.value else {
                    throw CloudSyncError(
                        .badRemote,
                        "\(remote.displayName) answered a fetch of \(zone) with no page, and a history that keeps this group's mark")
                }
                batch = page
            } catch let error as CloudSyncError where error.code == .permissionDenied && zone.scope == .shared {
                return try await leave(zone, because: error.message, summary: &summary)
            } catch let error as CloudSyncError where error.code == .tokenExpired && !listing {
                // A remote replaced or restored between the check of its history and the read of the page
                // (a remote that cannot do both in one transaction) expires the token: found now.
                if try await checkRemoteHistory() { throw RemoteFoundReset() }
                logger.info("change token expired: listing the zone again", metadata: ["zone": "\(zone)"])
                token = nil
                listing = true
                heldBeforeListing = try readDatabase { try SyncState.hasRecords($0) }
                seen = []
                continue
            }
            if !batch.changed.isEmpty || !batch.deleted.isEmpty { tracer.mark(.fetchAnswered) }
            if listing { for record in batch.changed { seen.insert(record.id.type.lowercased() + "\u{0}" + record.id.name) } }
            let last = !batch.moreComing
            if batch.changed.isEmpty && batch.deleted.isEmpty && batch.movedOut.isEmpty && !listing && batch.token == token && last {
                break
            }
            if state.echoes.acknowledgedSinceFetch && !listing && batch.deleted.isEmpty && batch.movedOut.isEmpty && !batch.changed.isEmpty,
                try await onlyEchoes(batch.changed)
            {
                // This group's own uploads coming back: nothing to write. The token moves on here
                // and is stored with the next write of the sync state (a crash fetches them again).
                state.tokens[zone] = .moved(batch.token)
                token = batch.token
                if last { break } else { continue }
            }
            var gone: (deleted: [CloudRecordID], forgotten: [CloudRecordID]) = ([], [])
            if listing && last { gone = try await unseen(in: zone, seen: seen) }
            // A subscribed table's record a listing lacks may be out of the subset rather than deleted.
            let subscribed = subscription.filters
            let outOfSubset = gone.deleted.filter { subscribed[$0.type.lowercased()] != nil }
            let forgottenHere = try await versionsForgotten(in: batch.changed, listing: listing, heldBeforeListing: heldBeforeListing)
            tracer.mark(.applyStarted)
            let (outcome, _) = try await apply(
                batch, zone: zone, saveToken: (!listing || last) ? batch.token : nil,
                deleted: gone.deleted.filter { subscribed[$0.type.lowercased()] == nil }, forgotten: gone.forgotten,
                movedOut: batch.movedOut + outOfSubset, listing: listing, forgottenHere: forgottenHere)
            if outcome.applied > 0 { tracer.mark(.applied) }
            report(outcome, into: &summary)
            applied += outcome.applied
            parked += outcome.parked
            token = batch.token
            if last { break }
        }
        try await pullParents(of: parked, zone: zone, summary: &summary)
        return applied
    }

    /// The records whose version here the remote forgot (see
    /// ``CloudDatabase/forgotten(_:)``): of a full listing, those held here at
    /// another version (another tag, or the same tag with other values: a
    /// position issued again); of any fetch, those deleted here under
    /// another tag before the remote was last found replaced or restored. The remote was replaced or restored from an older copy,
    /// and this group's acknowledged version (or delete) may be newer than
    /// the one it lists (``RecordApplier/Outcome/forgottenHere``).
    /// `heldBeforeListing`: this group held records when the listing began.
    private func versionsForgotten(
        in records: [CloudRecord], listing: Bool, heldBeforeListing: Bool
    ) async throws -> Set<RecordApplier.RecordKey> {
        guard !records.isEmpty else { return [] }
        // Only a record deleted here before the remote was last found reset can come back as a copy
        // older than the delete: after that, a record listed under another tag was made again since.
        // Never found reset, a fetch that lists nothing reads nothing.
        let resetAt = try lastRemoteReset()
        guard listing || resetAt != nil else { return [] }
        let applier = self.applier
        let held = try readDatabase { db -> [CloudRecordID: String] in
            var held: [CloudRecordID: String] = [:]
            let tombstones = try resetAt != nil && SyncState.hasTombstones(db)
            // Nothing held and nothing deleted here (a first download): nothing the remote can have forgotten.
            guard tombstones || (listing && heldBeforeListing) else { return held }
            for record in records {
                guard let table = applier.table(named: record.id.type) else { continue }
                let name = record.id.name
                if listing, heldBeforeListing, let state = try SyncState.recordState(db, entity: table.name, name: name) {
                    if state.tag != record.tag || !RecordApplier.same(state.ancestor, record.fields) { held[record.id] = state.tag }
                } else if tombstones, let resetAt, let tombstone = try SyncState.tombstone(db, entity: table.name, name: name),
                    tombstone.tag != record.tag, tombstone.editedAt != nil, tombstone.deletedAt < resetAt,
                    try listing || SyncState.recordState(db, entity: table.name, name: name) == nil
                {
                    held[record.id] = tombstone.tag
                }
            }
            return held
        }
        guard !held.isEmpty else { return [] }
        let forgotten = try await Retry.run(configuration, "check versions the remote \(remote.displayName) lists") {
            try await self.remote.forgotten(held)
        }
        if !forgotten.isEmpty {
            logger.info(
                "the remote lists older versions of records this group had synced or deleted: this group's go up again",
                metadata: ["count": "\(forgotten.count)"])
        }
        return Set(forgotten.map { RecordApplier.RecordKey(table: $0.type.lowercased(), name: $0.name) })
    }

    /// Whether every record is already here at its tag (this group's own
    /// uploads, acknowledged, coming back).
    private func onlyEchoes(_ records: [CloudRecord]) async throws -> Bool {
        // The tags the remote just gave this group's uploads (no read).
        if records.allSatisfy({ state.echoes.tags[$0.id] == $0.tag }) { return true }
        let applier = self.applier
        return try readDatabase { db in
            try records.allSatisfy { record in
                guard let table = applier.table(named: record.id.type) else { return false }
                return try SyncState.recordState(db, entity: table.name, name: record.id.name)?.tag == record.tag
            }
        }
    }

    /// A shared zone this user may not read (not shared with them yet, or no
    /// longer), or that this group no longer syncs: the records this group
    /// holds in it leave the group, deleted here as remote deletions are,
    /// and its token goes with them in the same transaction, so that sharing
    /// it again lists it in full. A record with a local change not uploaded
    /// yet stays, as a new record of this group: it is uploaded to the zone
    /// its table syncs with, or refused and parked, never dropped.
    private func leave(_ zone: CloudZone, because reason: String, summary: inout CloudSyncSummary) async throws -> Int {
        let (held, token) = try readDatabase { db in
            let held = try Row.fetchAll(
                db, sql: "SELECT entity, name FROM \(SyncState.record) WHERE zone = ?", arguments: [zone.description]
            )
            .map { CloudRecordID(zone: zone, type: $0[0], name: $0[1]) }
            return (held, try SyncState.token(db, zone: zone))
        }
        guard !held.isEmpty || token != nil else {
            logger.debug(
                "shared zone not shared with this user (yet): nothing fetched", metadata: ["zone": "\(zone)", "reason": "\(reason)"])
            return 0
        }
        let empty = CloudChangeBatch(changed: [], deleted: [], token: CloudChangeToken(""), moreComing: false)
        // Which records have local edits is decided in the apply's transaction (by value, see ``RecordApplier/localEdit``).
        let (outcome, left) = try await apply(empty, zone: zone, saveToken: nil, dropToken: true, deleted: [], forgotten: [], leaving: held)
        logger.info(
            "shared zone left: its records leave the group",
            metadata: ["zone": "\(zone)", "records": "\(left)", "keptEdited": "\(held.count - left)", "reason": "\(reason)"])
        events.emit(.zoneLeft(zone: zone, records: left, reason: reason))
        report(outcome, into: &summary)
        return outcome.applied
    }

    /// The records this group holds in `zone` that a full listing lacked:
    /// deleted on the remote, or forgotten by it (replaced or restored).
    private func unseen(in zone: CloudZone, seen: Set<String>) async throws -> (deleted: [CloudRecordID], forgotten: [CloudRecordID]) {
        // Read as Sendable values, so the read runs off this actor's thread.
        let held = try readDatabase { db in
            try Row.fetchAll(db, sql: "SELECT entity, name, tag FROM \(SyncState.record) WHERE zone = ?", arguments: [zone.description])
                .map { (entity: $0[0] as String, name: $0[1] as String, tag: $0[2] as String) }
        }
        var missing: [CloudRecordID: String] = [:]
        for row in held where !seen.contains(row.entity.lowercased() + "\u{0}" + row.name) {
            missing[CloudRecordID(zone: zone, type: row.entity, name: row.name)] = row.tag
        }
        guard !missing.isEmpty else { return ([], []) }
        let snapshot = missing
        let forgotten = try await Retry.run(configuration, "check records missing from \(remote.displayName)") {
            try await self.remote.forgotten(snapshot)
        }
        if !forgotten.isEmpty {
            logger.info("the remote lost records this group had synced: uploading them again", metadata: ["count": "\(forgotten.count)"])
        }
        return (missing.keys.filter { !forgotten.contains($0) }, Array(forgotten))
    }

    /// Applies one page of a zone's changes (and the records a listing
    /// lacked: `gone`, deleted remotely, and `forgotten`, to upload again)
    /// in one transaction that first takes the history in. `leaving`: the
    /// records of a zone this group leaves; those with local edits not
    /// uploaded stay as new records, the others are removed (returns how
    /// many).
    /// `movedOut`: records that left this group's subscription (see
    /// ``RecordApplier/moveOut(_:in:outcome:)``).
    @discardableResult
    func apply(
        _ batch: CloudChangeBatch, zone: CloudZone, saveToken: CloudChangeToken?, dropToken: Bool = false, deleted gone: [CloudRecordID],
        forgotten: [CloudRecordID], movedOut: [CloudRecordID] = [], leaving: [CloudRecordID] = [], listing: Bool = false,
        forgottenHere: Set<RecordApplier.RecordKey> = []
    ) async throws -> (outcome: RecordApplier.Outcome, left: Int) {
        let assets = try await downloadAssets(for: batch.changed)
        let applier = self.applier
        let tables = self.tables
        let moved = state.moved
        let store = self.store
        let (offset, now) = (state.clockOffset, configuration.clock())
        let takenIn = historyTakenIn
        let intakePosition = state.intakePosition
        let (outcome, left, ownThrough) = try writeStore { db -> (RecordApplier.Outcome, Int, Int64?) in
            // Local edits not taken in yet are found by value, record by record (see
            // ``RecordApplier/localEdit``): a fetched record meets each of them as a conflict.
            // With nothing committed since the intake but the bridge's own, pending keys say it all.
            let editsUntaken = try store.hasChanges(db, after: takenIn, byOtherThan: store.member)
            var gone = gone
            // Records of a zone left that were edited here stay, as new records of this group.
            var kept: [CloudRecordID] = []
            for id in leaving {
                if try applier.hasLocalEdit(id, in: db) { kept.append(id) } else { gone.append(id) }
            }
            var outcome = RecordApplier.Outcome()
            outcome.editsUntaken = editsUntaken
            outcome.clockOffset = offset
            outcome.listing = listing
            outcome.forgottenHere = forgottenHere
            outcome.mayHaveOrphans = try SyncState.hasOrphans(db)
            outcome.tombstonesKept = try SyncState.hasTombstones(db)
            outcome.pendingKept = try SyncState.hasPending(db)
            let byType = Dictionary(grouping: batch.changed) { $0.id.type.lowercased() }
            for table in tables {
                for record in byType[table.name.lowercased()] ?? [] {
                    try applier.apply(record, assets: assets, in: db, outcome: &outcome)
                }
            }
            let deleted = batch.deleted + gone
            // Forgotten by the remote, or kept from a zone left: uploaded again (nothing here is lost).
            for id in forgotten {
                try applier.uploadAgain(id, keepingItsPlace: true, clockOffset: offset, now: now, in: db, work: &outcome.work)
            }
            for id in kept {
                try applier.uploadAgain(id, keepingItsPlace: false, clockOffset: offset, now: now, in: db, work: &outcome.work)
            }
            let deletedByType = Dictionary(grouping: deleted) { $0.type.lowercased() }
            for table in tables.reversed() {
                for id in deletedByType[table.name.lowercased()] ?? [] {
                    try applier.applyDelete(id, in: db, outcome: &outcome)
                }
            }
            for id in movedOut { try applier.moveOut(id, in: db, outcome: &outcome) }
            try applier.retryOrphans(assets: assets, in: db, outcome: &outcome)
            try applier.takeInConsequences(of: &outcome, store: store, in: db)
            try Self.store(moved, in: db)
            if let saveToken { try SyncState.setToken(db, zone: zone, saveToken) }
            if dropToken { try SyncState.dropToken(db, zone: zone) }
            if !leaving.isEmpty {
                // The records left the group, not the remote: no tombstone may delete them there later.
                try db.execute(sql: "DELETE FROM \(SyncState.tombstone) WHERE zone = ?", arguments: [zone.description])
            }
            // Nothing of others followed the intake position: through here, the history is taken in or the bridge's.
            let ownThrough = editsUntaken ? nil : try store.historyHead(db)
            return (outcome, leaving.count - kept.count, ownThrough)
        }
        if let ownThrough { state.ownThrough = (intakePosition, ownThrough) }
        state.stored(moved)
        if let saveToken { state.tokens[zone] = .stored(saveToken) }
        if dropToken { state.tokens[zone] = .stored(nil) }
        state.orphansMayExist = outcome.mayHaveOrphans
        // An apply that marked nothing pending (remote changes written, nothing of this group's on top)
        // leaves nothing to upload: no upload pass, and no write transaction to find that out.
        state.record(.gave(outcome.work))
        if !outcome.conflicts.isEmpty { state.record(.settledConflicts) }
        return (outcome, left)
    }

    /// The bytes of the assets these records name that are not here yet
    /// (orphans waiting for a parent included).
    private func downloadAssets(for records: [CloudRecord]) async throws -> [String: [UInt8]] {
        let withAssets = records.filter { $0.fields.values.contains { if case .asset = $0 { true } else { false } } }
        guard !withAssets.isEmpty || state.orphansMayExist else { return [:] }
        let applier = self.applier
        let (orphans, fresh) = try readDatabase { db -> ([CloudRecord], [CloudRecord]) in
            // Records this group already has at that tag (its own uploads, coming back) need nothing.
            let fresh = try withAssets.filter { record in
                guard let table = applier.table(named: record.id.type) else { return false }
                return try SyncState.recordState(db, entity: table.name, name: record.id.name)?.tag != record.tag
            }
            return (try SyncState.orphans(db).compactMap(\.record), fresh)
        }
        var wanted: [String: CloudAsset] = [:]
        for record in fresh + orphans {
            for value in record.fields.values { if case .asset(let asset) = value { wanted[asset.hash] = asset } }
        }
        var bytes: [String: [UInt8]] = [:]
        for asset in wanted.values {
            do {
                bytes[asset.hash] = try await Retry.run(configuration, "download asset \(asset.hash) from \(remote.displayName)") {
                    try await self.remote.downloadAsset(asset)
                }
            } catch let error as CloudSyncError where error.code == .badRemote {
                // One record naming an asset the remote does not have (or
                // will not give) waits, parked; the others go on.
                logger.info("asset not on the remote; its record waits", metadata: ["asset": "\(asset.hash)", "error": "\(error.message)"])
            }
        }
        return bytes
    }

    func report(_ outcome: RecordApplier.Outcome, into summary: inout CloudSyncSummary) {
        summary.conflicts += outcome.conflicts.count
        summary.parked += outcome.parked.count
        for conflict in outcome.conflicts {
            events.emit(.conflict(table: conflict.table, record: conflict.record, outcome: conflict.outcome))
        }
        for parked in outcome.parked {
            logger.info(
                "record parked", metadata: ["table": "\(parked.table)", "record": "\(parked.record)", "reason": "\(parked.reason)"])
            events.emit(.parked(table: parked.table, record: parked.record, reason: parked.reason))
        }
        for (table, count) in outcome.movedOut.sorted(by: { $0.key < $1.key }) {
            logger.info("rows left the subscription: removed here", metadata: ["table": "\(table)", "count": "\(count)"])
            events.emit(.movedOut(table: table, count: count))
        }
        for drift in outcome.drifts {
            logger.info(
                "the remote's records have a column this table lacks: its values stay on the remote, not applied here",
                metadata: ["table": "\(drift.table)", "column": "\(drift.column)"])
            events.emit(.schemaDrift(table: drift.table, column: drift.column))
        }
    }
}

/// A remote found replaced or restored in the middle of a fetch: the fetch
/// starts again, listing every zone (``SyncEngine/fetchAll(summary:)``).
struct RemoteFoundReset: Error {}
