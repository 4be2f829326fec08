import Foundation

extension MemoryRemoteStore {
    /// One page of `zone`'s changes after `start` (`nil`: a full listing of
    /// the live records), as the embedded remote pages its change log.
    func page(_ zone: CloudZone, after start: FeedToken?, limit: Int, display: String) throws(CloudSyncError) -> CloudChangeBatch {
        let position: Int64
        let floor: Int64
        if let start {
            guard start.epoch == epoch else {
                throw CloudSyncError(.tokenExpired, "the change token of \(zone) was issued by another remote than \(display); fetch the zone again")
            }
            guard start.floor <= head else {
                throw CloudSyncError(.tokenExpired, "the change token of \(zone) is ahead of the remote \(display); fetch the zone again")
            }
            guard start.floor >= horizon else {
                throw CloudSyncError(
                    .tokenExpired, "the change token of \(zone) is older than the remote \(display) keeps changes for; fetch the zone again")
            }
            (position, floor) = (start.position, start.floor)
        } else {
            // A full listing: live records only; deletions from before it concern nobody.
            (position, floor) = (0, head)
        }
        let rows = records.values.filter { $0.record.id.zone == zone && $0.seq > position && (!$0.deleted || $0.seq > floor) }
            .sorted { $0.seq < $1.seq }
        let moreComing = rows.count > limit
        var batch = CloudChangeBatch(changed: [], deleted: [], token: CloudChangeToken(""), moreComing: moreComing)
        var last = position
        for stored in rows.prefix(limit) {
            if stored.deleted { batch.deleted.append(stored.record.id) } else { batch.changed.append(stored.record) }
            last = stored.seq
        }
        let next = moreComing ? FeedToken(epoch: epoch, position: last, floor: floor) : FeedToken(epoch: epoch, position: head, floor: head)
        batch.token = next.token
        return batch
    }

    /// Of records held at these tags, those this remote never deleted (see
    /// ``CloudDatabase/forgotten(_:)``): a tag names the log entry that
    /// issued it, so one beyond the head, of another epoch, or whose entry
    /// is another record's was never issued for that record here.
    func forgotten(_ held: [CloudRecordID: String]) -> Set<CloudRecordID> {
        let prefix = String(epoch.prefix(8))
        var forgotten = Set<CloudRecordID>()
        for (id, tag) in held {
            let parts = tag.split(separator: "-", maxSplits: 1)
            guard parts.count == 2, let seq = Int64(parts[0]), parts[1] == prefix, seq <= head else {
                forgotten.insert(id)
                continue
            }
            if let entry = log[seq] {
                if entry != Key(id) { forgotten.insert(id) }
            } else if seq > horizon {
                forgotten.insert(id)
            }
        }
        return forgotten
    }

    /// Registers record types for ``CloudDatabase/prepare(_:)``; a known type
    /// keeps its scope and gains new columns.
    mutating func prepare(_ types: [CloudRecordType]) throws(CloudSyncError) {
        var updated = self.types
        for type in types {
            guard var known = updated[type.name] else {
                updated[type.name] = type
                continue
            }
            guard known.scope == type.scope else {
                throw CloudSyncError(
                    .scopeChanged, "table \(type.name) was first synced as \(known.scope.rawValue); it cannot be synced as \(type.scope.rawValue)")
            }
            let names = Set(known.columns.map(\.name))
            known.columns += type.columns.filter { !names.contains($0.name) }
            updated[type.name] = known
        }
        self.types = updated
    }
}
