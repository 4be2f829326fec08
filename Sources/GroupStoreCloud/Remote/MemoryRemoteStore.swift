import Foundation

/// What a ``MemoryRemote`` holds — record types, records with their tags and
/// tombstones, the change log, assets, shares — and the rules it enforces,
/// as the embedded remote's tables and statements do. A value: the remote
/// keeps it behind one lock, so each call sees and changes it at once.
struct MemoryRemoteStore: Sendable {
    struct Key: Hashable, Sendable {
        var zone: CloudZone
        var type: String
        var name: String
        init(_ id: CloudRecordID) { (zone, type, name) = (id.zone, id.type, id.name) }
    }

    struct Stored: Sendable {
        var record: CloudRecord
        var deleted: Bool
        /// The log position of its latest change (its tag is made from it).
        var seq: Int64
    }

    struct ShareKey: Hashable, Sendable {
        var owner: String
        var zone: String
        var member: String
    }

    /// A new one for each remote made: tokens and tags of another never pass.
    let epoch = UUID().uuidString.lowercased()
    var types: [String: CloudRecordType] = [:]
    var records: [Key: Stored] = [:]
    /// Which record each log position changed (pruned up to ``horizon``).
    var log: [Int64: Key] = [:]
    /// What identifies the change at each log position (see ``CloudHistoryMark/entry``).
    var entries: [Int64: String] = [:]
    /// The fields of the record before the change at each log position,
    /// when it was live then (what a subscription's subset held before it).
    var previous: [Int64: CloudFields] = [:]
    var head: Int64 = 0
    /// The oldest position still served: tokens before it expire.
    var horizon: Int64 = 0
    var assets: [String: [UInt8]] = [:]
    var shares: [ShareKey: Bool] = [:]

    // MARK: writes

    /// Applies one change for `user` (see ``CloudDatabase/modify(_:)``).
    mutating func apply(_ change: CloudRecordChange, user: String, conflictOnEverySave: Bool, now: Date) -> CloudModifyResult {
        let id = canonical(change.id)
        if let reason = refusal(for: id, user: user) { return .refused(id, reason: reason) }
        let stored = records[Key(id)]
        let live = stored.flatMap { $0.deleted ? nil : $0.record }
        if let live, id.zone.scope == .public, live.owner != user {
            return .refused(id, reason: "\(id) was created by another user; only its creator may change it")
        }
        switch change {
        case .save(_, let baseTag, let fields, let editedAt, let bringsBack):
            guard let baseTag else {
                if let live { return .conflict(id, server: live) }
                // A version brought back does not undo a delete made since.
                let deletedAt = Self.deleteTime(stored)
                if bringsBack, CloudRecordChange.deleteIsLater(deletedAt, than: editedAt) {
                    return .conflict(id, server: nil, deletedAt: deletedAt)
                }
                let record = CloudRecord(
                    id: id, tag: "", fields: fields, owner: user, editedAt: Self.editedTime(editedAt, base: nil, now: now), editedBy: user)
                return .saved(write(record, deleted: false))
            }
            guard var record = live else { return .conflict(id, server: nil, deletedAt: Self.deleteTime(stored)) }
            if conflictOnEverySave { return .conflict(id, server: write(record, deleted: false)) }
            guard record.tag == baseTag else { return .conflict(id, server: record) }
            record.fields.merge(fields) { _, new in new }
            record.editedAt = Self.editedTime(editedAt, base: record.editedAt, now: now)
            record.editedBy = user
            return .saved(write(record, deleted: false))
        case .delete(_, let baseTag, let editedAt):
            guard let baseTag else { return live.map { .conflict(id, server: $0) } ?? .deleted(id) }
            guard var record = live else { return .conflict(id, server: nil, deletedAt: Self.deleteTime(stored)) }
            guard record.tag == baseTag else { return .conflict(id, server: record) }
            record.fields = [:]
            record.editedAt = Self.editedTime(editedAt, base: record.editedAt, now: now)
            record.editedBy = user
            _ = write(record, deleted: true)
            return .deleted(id)
        }
    }

    /// The edit time of the delete a tombstone keeps (`nil`: no tombstone).
    private static func deleteTime(_ stored: Stored?) -> Date? {
        guard let stored, stored.deleted else { return nil }
        return stored.record.editedAt
    }

    /// Why `user` may not write `id` at all, if so.
    func refusal(for id: CloudRecordID, user: String) -> String? {
        if id.zone.scope == .private, id.zone.owner != user {
            return "\(id.zone) is another user's private zone; \(user) may not write to it"
        }
        if id.zone.scope == .shared {
            switch access(to: id.zone, user: user) {
            case .readWrite: break
            case .readOnly: return "\(id.zone) is shared with \(user) read-only"
            case nil: return "\(id.zone) is not shared with \(user)"
            }
        }
        guard let type = types[id.type.lowercased()] else { return "record type \(id.type) was never prepared on this remote" }
        guard type.scope == id.zone.scope else {
            return "record type \(id.type) is synced as \(type.scope.rawValue); it cannot be written to \(id.zone)"
        }
        return nil
    }

    /// `id` with its type spelled as first prepared: table names are matched
    /// as SQLite matches them (ignoring case), one record type per table.
    func canonical(_ id: CloudRecordID) -> CloudRecordID {
        var id = id
        if let type = types[id.type.lowercased()] { id.type = type.name }
        return id
    }

    /// Logs the change and stores `record` (or its tombstone) under a new tag.
    private mutating func write(_ record: CloudRecord, deleted: Bool) -> CloudRecord {
        head += 1
        if let before = records[Key(record.id)], !before.deleted { previous[head] = before.record.fields }
        var record = record
        let entry = FeedToken.newEntry()
        record.tag = FeedToken.tag(seq: head, epoch: epoch, entry: entry)
        log[head] = Key(record.id)
        entries[head] = entry
        records[Key(record.id)] = Stored(record: record, deleted: deleted, seq: head)
        return record
    }

    /// The client's edit time, raised just above the version it edits and
    /// never after the remote's clock.
    private static func editedTime(_ editedAt: Date, base: Date?, now: Date) -> Date {
        var seconds = editedAt.timeIntervalSince1970
        if !seconds.isFinite { seconds = now.timeIntervalSince1970 }
        if let base { seconds = max(seconds, base.timeIntervalSince1970 + 0.001) }
        return Date(timeIntervalSince1970: min(seconds, now.timeIntervalSince1970))
    }

    /// Whether `user` may read `zone`: a private zone its owner, a shared
    /// zone its owner and those it is shared with, the public zone everyone.
    func mayRead(_ zone: CloudZone, user: String) -> Bool {
        switch zone.scope {
        case .private: return zone.owner == user
        case .shared: return access(to: zone, user: user) != nil
        case .public: return true
        }
    }

    /// What `user` may do in the shared zone `zone`: its owner everything.
    func access(to zone: CloudZone, user: String) -> CloudShareAccess? {
        if zone.owner == user { return .readWrite }
        return shares[ShareKey(owner: zone.owner, zone: zone.name, member: user)].map { $0 ? .readWrite : .readOnly }
    }

    /// Forgets the log up to the newest `n` entries, and the tombstones of
    /// the deletes forgotten with it; returns the new horizon.
    mutating func compactLog(keepingLast n: Int) -> Int64 {
        let positions = log.keys.sorted(by: >)
        guard positions.count > n else { return horizon }
        horizon = max(horizon, positions[max(0, n)])
        for position in log.keys where position <= horizon {
            log[position] = nil
            entries[position] = nil
            previous[position] = nil
        }
        records = records.filter { !$0.value.deleted || $0.value.seq > horizon }
        return horizon
    }
}
