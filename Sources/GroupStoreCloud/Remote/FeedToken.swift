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
