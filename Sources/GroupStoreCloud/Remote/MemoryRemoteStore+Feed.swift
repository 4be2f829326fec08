import Foundation

extension MemoryRemoteStore {
    /// One page of `zone`'s changes after `start` (`nil`: a full listing of
    /// the live records), as the embedded remote pages its change log.
    /// With `subset` (``MemoryRemote/Subset``), a subscribed type's records
    /// are sent as ``CloudDatabase/fetchChanges(in:since:limit:keeping:subscription:)`` says.
    func page(
        _ zone: CloudZone, after start: FeedToken?, limit: Int, display: String, subset: MemoryRemote.Subset? = nil
    ) throws(CloudSyncError) -> CloudChangeBatch {
        let (position, floor) = try FeedToken.range(from: start, epoch: epoch, head: head, horizon: horizon, zone: zone, remote: display)
        var rows = records.values.filter { $0.record.id.zone == zone && $0.seq > position && (!$0.deleted || $0.seq > floor) }
            .sorted { $0.seq < $1.seq }
        // Of a subscribed type: where each record stood at the token (its first change after it).
        var moves: [Key: (before: Bool, now: Bool)] = [:]
        if let subset {
            var firstAfter: [Key: Int64] = [:]
            for (seq, key) in log where seq > position && subset.types.contains(key.type.lowercased()) {
                if let known = firstAfter[key], known < seq { continue }
                firstAfter[key] = seq
            }
            var kept: [Stored] = []
            for stored in rows {
                let key = Key(stored.record.id)
                guard subset.types.contains(key.type.lowercased()) else {
                    kept.append(stored)
                    continue
                }
                let now = stored.deleted ? false : try subset.matches(key.type, key.name, stored.record.fields)
                var before = false
                if let seq = firstAfter[key], let fields = previous[seq] { before = try subset.matches(key.type, key.name, fields) }
                guard now || before else { continue }
                moves[key] = (before, now)
                kept.append(stored)
            }
            rows = kept
        }
        let moreComing = rows.count > limit
        var batch = CloudChangeBatch(changed: [], deleted: [], token: CloudChangeToken(""), moreComing: moreComing)
        var last = position
        for stored in rows.prefix(limit) {
            let move = moves[Key(stored.record.id)]
            if stored.deleted {
                batch.deleted.append(stored.record.id)
            } else if let move, !move.now {
                batch.movedOut.append(stored.record.id)
            } else {
                batch.changed.append(stored.record)
            }
            last = stored.seq
        }
        let next = moreComing ? FeedToken(epoch: epoch, position: last, floor: floor) : FeedToken(epoch: epoch, position: head, floor: head)
        batch.token = next.token
        return batch
    }

    /// Of records held at these tags, those this remote never deleted (see
    /// ``FeedToken/isForgotten(tag:epoch:head:horizon:entryIsTheRecords:)``).
    func forgotten(_ held: [CloudRecordID: String]) -> Set<CloudRecordID> {
        var forgotten = Set<CloudRecordID>()
        for (given, tag) in held {
            let id = canonical(given)
            guard
                FeedToken.isForgotten(
                    tag: tag, epoch: epoch, head: head, horizon: horizon,
                    entryIsTheRecords: { seq, entry in log[seq].map { $0 == Key(id) && (entry == nil || entries[seq] == entry) } })
            else { continue }
            forgotten.insert(given)
        }
        return forgotten
    }

    /// The mark of the latest change (see ``CloudHistoryMark``).
    var headMark: CloudHistoryMark {
        CloudHistoryMark(epoch: epoch, position: head, entry: entries[head] ?? "")
    }

    /// Whether `mark` is part of this history (see ``FeedToken/keeps(_:epoch:head:horizon:entry:)``).
    func keeps(_ mark: CloudHistoryMark) -> Bool {
        FeedToken.keeps(mark, epoch: epoch, head: head, horizon: horizon, entry: { entries[$0] })
    }

    /// Registers record types for ``CloudDatabase/prepare(_:)``; a known type
    /// keeps its scope and gains new columns.
    mutating func prepare(_ types: [CloudRecordType]) throws(CloudSyncError) {
        // By name ignoring case: one record type per table, spelled as first prepared.
        var updated = self.types
        for type in types {
            guard var known = updated[type.name.lowercased()] else {
                updated[type.name.lowercased()] = type
                continue
            }
            guard known.scope == type.scope else {
                throw CloudSyncError(
                    .scopeChanged,
                    "table \(type.name) was first synced as \(known.scope.rawValue); it cannot be synced as \(type.scope.rawValue)")
            }
            let names = Set(known.columns.map(\.name))
            known.columns += type.columns.filter { !names.contains($0.name) }
            updated[type.name.lowercased()] = known
        }
        self.types = updated
    }
}
