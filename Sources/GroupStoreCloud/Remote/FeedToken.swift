import Foundation

/// A position in a zone's change feed of a remote whose feed is one
/// numbered log (the embedded and the in-memory remote), as carried in a
/// ``CloudChangeToken``: `<epoch>:<position>`, or
/// `<epoch>:<position>:<floor>` in the middle of a full listing.
///
/// - `position`: the records changed after it are still to be listed.
/// - `floor`: deletions after it are still to be reported. Equal to
///   `position` in the change feed; during a full listing (a `nil` token
///   paged with `moreComing`) it is the log head when the listing started,
///   since records deleted before that were never handed to the client.
///
/// A token is served while `floor` is at or after the remote's horizon (no
/// tombstone it needs was pruned) and neither number is ahead of the log
/// (a remote restored from an older copy), in the epoch it was issued in.
package struct FeedToken: Equatable, Sendable {
    package var epoch: String
    package var position: Int64
    package var floor: Int64

    package init(epoch: String, position: Int64, floor: Int64) {
        self.epoch = epoch
        self.position = position
        self.floor = max(floor, position)
    }

    /// Parses a token; `nil` when it is not one of this remote's tokens.
    package init?(_ token: CloudChangeToken) {
        let parts = token.rawValue.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, !parts[0].isEmpty,
            let position = Int64(parts[1]), position >= 0
        else { return nil }
        var floor = position
        if parts.count == 3 {
            guard let value = Int64(parts[2]), value >= position else { return nil }
            floor = value
        }
        self.init(epoch: String(parts[0]), position: position, floor: floor)
    }

    package var token: CloudChangeToken {
        CloudChangeToken(floor == position ? "\(epoch):\(position)" : "\(epoch):\(position):\(floor)")
    }
}

extension FeedToken {
    /// The token a fetch of `zone` starts from: `nil` for a full listing;
    /// ``CloudSyncError/Code/tokenExpired`` for one that is not a token of
    /// a log-numbered remote, or when `faults` expire it.
    package static func start(
        of token: CloudChangeToken?, in zone: CloudZone, remote display: String, faults: RemoteFaults
    ) throws(CloudSyncError) -> FeedToken? {
        guard let token else { return nil }
        guard let parsed = FeedToken(token) else {
            throw CloudSyncError(.tokenExpired, "the change token of \(zone) is not one of the remote \(display); fetch the zone again")
        }
        if faults.consumeTokenExpiry() {
            throw CloudSyncError(.tokenExpired, "the remote \(display) expired the change token of \(zone) (injected fault)")
        }
        return parsed
    }

    /// Where a page of `zone` starts in a log at `head` that keeps changes
    /// after `horizon`: the position after which records are listed, and the
    /// floor after which deletions are. A full listing (`start` `nil`) lists
    /// live records only. A token of another epoch, ahead of the log or
    /// before the horizon has expired.
    package static func range(
        from start: FeedToken?, epoch: String, head: Int64, horizon: Int64, zone: CloudZone, remote display: String
    ) throws(CloudSyncError) -> (position: Int64, floor: Int64) {
        guard let start else { return (0, head) }
        guard start.epoch == epoch else {
            throw CloudSyncError(
                .tokenExpired,
                "the change token of \(zone) was issued by another remote at \(display) (replaced or restored); fetch the zone again")
        }
        guard start.floor <= head else {
            throw CloudSyncError(
                .tokenExpired,
                "the change token of \(zone) is ahead of the remote \(display) (restored from an older copy?); fetch the zone again")
        }
        guard start.floor >= horizon else {
            throw CloudSyncError(
                .tokenExpired, "the change token of \(zone) is older than the remote \(display) keeps changes for; fetch the zone again")
        }
        return (start.position, start.floor)
    }

    /// The tag of the change at log position `seq`: the position, the
    /// start of the epoch, and what identifies that change (``newEntry()``),
    /// so a position issued again after a restore never gives the same tag.
    package static func tag(seq: Int64, epoch: String, entry: String) -> String {
        "\(seq)-\(epoch.prefix(8))-\(entry)"
    }

    /// A new change's identity in the log: 12 random hexadecimal digits.
    package static func newEntry() -> String {
        // 12 lowercase hex digits (as `%012llx`; `String(format:)` cost a tenth of an upload's log writes).
        let hex = String(UInt64.random(in: 0..<(1 << 48)), radix: 16)
        return String(repeating: "0", count: 12 - hex.count) + hex
    }

    /// Whether a remote forgot a record held at `tag` (see
    /// ``CloudDatabase/forgotten(_:)``): a tag names the log entry that
    /// issued it, so one of another epoch, beyond the head, or whose entry is
    /// another record's (or another change's, when the tag names its entry)
    /// was never issued for that record here; with no entry left
    /// (compacted), one after the horizon was never issued either. Tags made
    /// before entries were named (`<seq>-<epoch>`) are checked by position.
    /// - Parameter entryIsTheRecords: for a position and the entry the tag
    ///   names (if any), whether its log entry is the record's (`nil`: no entry).
    package static func isForgotten(
        tag: String, epoch: String, head: Int64, horizon: Int64, entryIsTheRecords: (Int64, String?) throws -> Bool?
    ) rethrows -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, let seq = Int64(parts[0]), parts[1] == epoch.prefix(8), seq <= head else {
            return true
        }
        if let same = try entryIsTheRecords(seq, parts.count == 3 ? String(parts[2]) : nil) { return !same }
        return seq > horizon
    }

    /// Whether `mark` is part of the history of a log at `head` that keeps
    /// changes after `horizon`: same epoch, not beyond the head, and the
    /// change at its position the one it names — or no longer logged at or
    /// below the horizon (pruned: nothing tells otherwise).
    /// - Parameter entry: what identifies the change logged at a position (`nil`: none logged there).
    package static func keeps(
        _ mark: CloudHistoryMark, epoch: String, head: Int64, horizon: Int64, entry: (Int64) throws -> String?
    ) rethrows -> Bool {
        guard mark.epoch == epoch, mark.position <= head else { return false }
        guard mark.position > 0, !mark.entry.isEmpty else { return true }
        guard let logged = try entry(mark.position) else { return mark.position <= horizon }
        return logged.isEmpty || logged == mark.entry
    }
}
