import Foundation
import GRDB
import GroupStoreCloud
import Logging

extension EmbeddedRemote {
    /// Applies `changes`, each on its own, in one write transaction, and says
    /// what happened to each, in order.
    ///
    /// - A save with no base tag creates the record (owned by ``user``) unless
    ///   a live one exists: then a conflict with it. One that brings a version
    ///   back (`bringsBack`) is also a conflict, with `nil` and the delete's
    ///   time, where the tombstone holds a delete edited after it.
    /// - A save with the record's current tag merges the given fields onto the
    ///   stored ones (fields not given are kept) under a new tag; a stale tag
    ///   is a conflict with the server's record, or with `nil` when it was
    ///   deleted (and the delete's edit time, which its tombstone keeps).
    /// - A delete with the current tag leaves a tombstone under a new tag; a
    ///   delete with no tag of a record that is not there is done already.
    /// - Writing another user's private zone, or a public record another user
    ///   created, is refused; so is a record type never prepared, or written
    ///   to a zone of the other scope.
    ///
    /// The edit time stored is the change's, raised just above the version it
    /// edits and never later than the remote's clock.
    ///
    /// - Throws: ``CloudSyncError/Code/batchTooLarge`` for more than
    ///   ``EmbeddedRemoteFaults/maxBatchRecords`` changes or more than
    ///   ``maxBatchBytes`` estimated bytes (nothing is applied);
    ///   ``CloudSyncError/Code/transient``, ``CloudSyncError/Code/rateLimited``,
    ///   ``CloudSyncError/Code/badRemote`` (nothing is applied).
    public func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
        try await modify(changes, keeping: nil).value ?? []
    }

    /// ``modify(_:)`` in the same write transaction as the check of `mark`
    /// (nothing is applied when the file no longer keeps it), and the log's
    /// head after the changes.
    public func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<
        [CloudModifyResult]
    > {
        let display = path
        return try await perform("modify") { connection in
            let context = try modifyContext(changes, connection)
            let answer = try await connection.write { db -> CloudHistoryChecked<[CloudModifyResult]> in
                let epoch = try Self.epoch(db, display: display)
                let (before, keeps) = try EmbeddedRemoteSchema.history(db, epoch: epoch, keeping: mark)
                guard keeps else {
                    return CloudHistoryChecked(value: nil, history: CloudRemoteHistory(head: before, keepsMark: false, now: Date()))
                }
                let results = try context?.apply(changes, db) ?? []
                let (after, _) = try EmbeddedRemoteSchema.history(db, epoch: epoch, keeping: nil)
                return CloudHistoryChecked(value: results, history: CloudRemoteHistory(head: after, keepsMark: true, now: Date()))
            }
            if answer.value?.isEmpty == false { logModify(changes) }
            return answer
        }
    }

    /// What a `modify` of `changes` needs, once they are checked to fit
    /// one call; `nil` when there is nothing to do.
    private func modifyContext(_ changes: [CloudRecordChange], _ connection: EmbeddedRemoteConnection) throws -> ModifyContext? {
        let limit = faults.maxBatchRecords
        guard changes.count <= limit else {
            throw CloudSyncError(.batchTooLarge, "\(changes.count) changes are more than the remote \(path) takes at once (\(limit))")
        }
        let bytes = changes.reduce(0) { $0 + $1.batchSize }
        guard bytes <= Self.maxBatchBytes else {
            throw CloudSyncError(
                .batchTooLarge,
                "\(changes.count) changes (\(bytes) bytes) are more than the remote \(path) takes at once (\(Self.maxBatchBytes) bytes)")
        }
        guard !changes.isEmpty else { return nil }
        return ModifyContext(user: user, display: path, epoch: connection.epoch, conflictOnEverySave: faults.conflictOnEverySave)
    }

    private func logModify(_ changes: [CloudRecordChange]) {
        logger.debug("embedded remote modify", metadata: ["remote": "\(path)", "changes": "\(changes.count)", "user": "\(user)"])
    }
}

/// What one `modify` transaction needs to know.
private struct ModifyContext: Sendable {
    var user: String
    var display: String
    var epoch: String
    var conflictOnEverySave: Bool

    func apply(_ changes: [CloudRecordChange], _ db: Database) throws -> [CloudModifyResult] {
        let types = try EmbeddedRemote.recordTypes(db)
        let now = Date().timeIntervalSince1970
        return try changes.map { change in
            // The type spelled as first prepared (table names are matched ignoring case).
            var id = change.id
            if let type = types[id.type.lowercased()] { id.type = type.name }
            if let reason = try refusal(for: id, types: types, db) { return .refused(id, reason: reason) }
            let stored = try EmbeddedRemoteRecord.fetch(db, id, display: display)
            let live = stored?.live
            // A tombstone keeps the delete's edit time: a stale edit of the record is answered with it.
            let deletedAt = stored.flatMap { $0.deleted ? $0.record.editedAt : nil }
            if let live, id.zone.scope == .public, live.owner != user {
                return .refused(id, reason: "\(id) was created by another user; only its creator may change it")
            }
            switch change {
            case .save(_, let baseTag, let fields, let editedAt, let bringsBack):
                return try save(
                    id, baseTag: baseTag, fields: fields, editedAt: editedAt, bringsBack: bringsBack, live: live, deletedAt: deletedAt,
                    now: now, db)
            case .delete(_, let baseTag, let editedAt):
                return try delete(id, baseTag: baseTag, editedAt: editedAt, live: live, deletedAt: deletedAt, now: now, db)
            }
        }
    }

    /// Why `id` may not be written by this user at all, if so.
    private func refusal(for id: CloudRecordID, types: [String: (name: String, scope: CloudScope)], _ db: Database) throws -> String? {
        if id.zone.scope == .private, id.zone.owner != user {
            return "\(id.zone) is another user's private zone; \(user) may not write to it"
        }
        if id.zone.scope == .shared {
            switch try EmbeddedRemote.access(db, to: id.zone, user: user) {
            case .readWrite: break
            case .readOnly: return "\(id.zone) is shared with \(user) read-only"
            case nil: return "\(id.zone) is not shared with \(user)"
            }
        }
        guard let scope = types[id.type.lowercased()]?.scope else {
            return "record type \(id.type) was never prepared on the remote \(display)"
        }
        guard scope == id.zone.scope else {
            return "record type \(id.type) is synced as \(scope.rawValue); it cannot be written to \(id.zone)"
        }
        return nil
    }

    private func save(
        _ id: CloudRecordID, baseTag: String?, fields: CloudFields, editedAt: Date, bringsBack: Bool, live: CloudRecord?, deletedAt: Date?,
        now: Double, _ db: Database
    ) throws -> CloudModifyResult {
        guard let baseTag else {
            if let live { return .conflict(id, server: live) }
            // A version brought back does not undo a delete made since.
            if bringsBack, CloudRecordChange.deleteIsLater(deletedAt, than: editedAt) {
                return .conflict(id, server: nil, deletedAt: deletedAt)
            }
            let record = CloudRecord(
                id: id, tag: "", fields: fields, owner: user, editedAt: editedTime(editedAt, base: nil, now: now), editedBy: user)
            return .saved(try write(record, deleted: false, previous: nil, db))
        }
        guard var record = live else { return .conflict(id, server: nil, deletedAt: deletedAt) }
        if conflictOnEverySave {
            // Injected fault: someone else saved it just before.
            return .conflict(id, server: try write(record, deleted: false, previous: record.fields, db))
        }
        guard record.tag == baseTag else { return .conflict(id, server: record) }
        record.fields.merge(fields) { _, new in new }
        record.editedAt = editedTime(editedAt, base: record.editedAt, now: now)
        record.editedBy = user
        return .saved(try write(record, deleted: false, previous: live?.fields, db))
    }

    private func delete(
        _ id: CloudRecordID, baseTag: String?, editedAt: Date, live: CloudRecord?, deletedAt: Date?, now: Double, _ db: Database
    ) throws -> CloudModifyResult {
        guard let baseTag else {
            if let live { return .conflict(id, server: live) }
            return .deleted(id)
        }
        guard var record = live else { return .conflict(id, server: nil, deletedAt: deletedAt) }
        guard record.tag == baseTag else { return .conflict(id, server: record) }
        record.fields = [:]
        record.editedAt = editedTime(editedAt, base: record.editedAt, now: now)
        record.editedBy = user
        _ = try write(record, deleted: true, previous: live?.fields, db)
        return .deleted(id)
    }

    /// Logs the change and stores `record` (or its tombstone) under a new
    /// tag: the record as stored. `previous`: its fields before, when live.
    private func write(_ record: CloudRecord, deleted: Bool, previous: CloudFields?, _ db: Database) throws -> CloudRecord {
        let (seq, entry) = try EmbeddedRemoteRecord.logChange(db, record.id, previous: previous)
        var record = record
        record.tag = FeedToken.tag(seq: seq, epoch: epoch, entry: entry)
        try EmbeddedRemoteRecord(record: record, deleted: deleted, seq: seq).store(db)
        return record
    }

    /// The edit time to store: the client's, raised just above the version
    /// it edits, and never after the remote's clock (a client clock ahead
    /// cannot claim the future). Rounded through `timeIntervalSince1970` as
    /// the row stores it, so the record returned equals the one fetched later.
    private func editedTime(_ editedAt: Date, base: Date?, now: Double) -> Date {
        var seconds = editedAt.timeIntervalSince1970
        if !seconds.isFinite { seconds = now }
        if let base {
            seconds = max(seconds, base.timeIntervalSince1970 + 0.001)
        }
        return Date(timeIntervalSince1970: min(seconds, now))
    }
}
