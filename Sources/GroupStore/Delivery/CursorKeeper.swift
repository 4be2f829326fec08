import Foundation

/// Everything about this member's durable cursor, in one place: where it
/// stands on disk, how far it may move, and when it may not move at all.
///
/// The cursor on disk says "every save up to here was processed". It may only
/// move to a position that is (a) processed by every subscriber (the feed's
/// safe cursor, handed in by the owner), (b) a position between two
/// transactions whose commit time is known (its fingerprint, so a restored
/// database is told apart), and (c) never below what was written already.
/// After a resync it waits until the resync itself is processed, so a
/// restart delivers it again if it was not.
///
/// A value owned by ``Delivery`` and touched on its queue only.
struct CursorKeeper {
    /// What holds the cursor where it is.
    enum Hold: Equatable {
        case none
        /// The cursor found at start does not belong to this history: nothing
        /// is written before the resync it calls for is delivered.
        case untilResyncDelivered
        /// A resync to `seq` was handed over: nothing is written before it is processed.
        case untilProcessed(Int64)
    }

    /// Whether this member keeps a cursor at all (it is not ``GroupConfiguration/writesOnly``).
    let persists: Bool
    /// The cursor last written, or -1 when the file must be written again.
    private(set) var persisted: Int64
    /// Everything up to here was processed: the cursor kept never goes below
    /// it. -1 after a resync.
    private var floor: Int64
    /// Where this member started, or resynced to: a position between two
    /// transactions, like each merged save's.
    private var base: Int64
    /// The commit time of merged transactions not yet written, by seq.
    private var fingerprints: [Int64: Double] = [:]
    private(set) var hold: Hold

    init(start: Merger.Start, persists: Bool) {
        self.persists = persists
        persisted = start.resync || !start.onDisk ? -1 : start.cursor.seq
        floor = start.resync ? -1 : start.cursor.seq
        base = start.cursor.seq
        hold = start.resync ? .untilResyncDelivered : .none
        if let fingerprint = start.cursor.fingerprint { fingerprints[start.cursor.seq] = fingerprint }
    }

    /// Transactions were merged (delivered, skipped, or this member's own).
    mutating func merged(seq: Int64, committedAt: Date) {
        fingerprints[seq] = committedAt.timeIntervalSince1970
    }

    /// A resync to `seq` was handed over: positions of the old history mean nothing.
    mutating func resynced(to seq: Int64) {
        fingerprints = [:]
        base = seq
        floor = -1
        persisted = -1
        hold = .untilProcessed(seq)
    }

    /// The member folder was re-created: the file must be written there again.
    mutating func folderReplaced() {
        persisted = -1
    }

    /// The position to write now, given how far every subscriber has
    /// processed (`safe`); `nil` when nothing is to be written.
    mutating func positionToWrite(safe: Int64) -> (seq: Int64, fingerprint: Double?)? {
        guard persists else { return nil }
        switch hold {
        case .untilResyncDelivered: return nil
        case .untilProcessed(let resync):
            guard safe >= resync else { return nil }
            hold = .none
        case .none: break
        }
        var position = safe
        // Sequence numbers are not consecutive: a position just before the
        // next save is kept as the transaction merged last before it (the
        // same position, none lies between; its fingerprint is known), or
        // where the member started or resynced to if none was merged since.
        if fingerprints[position] == nil {
            var candidates = fingerprints.keys.filter { $0 <= position }
            if base <= position { candidates.append(base) }
            if let best = candidates.max() { position = best }
        }
        // A subscriber left behind the buffer's floor reports its own
        // position, which may be below what was written already.
        position = max(position, floor)
        guard position != persisted else { return nil }
        return (position, fingerprints[position])
    }

    /// `seq` was written to disk.
    mutating func wrote(_ seq: Int64) {
        persisted = seq
        floor = seq
        fingerprints = fingerprints.filter { $0.key >= seq }
    }
}
