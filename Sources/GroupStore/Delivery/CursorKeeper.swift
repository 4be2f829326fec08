import Foundation

/// Everything about this member's durable cursor, in one place: where it
/// stands on disk, how far it may move, and when it may not move at all.
/// This is the one statement of the cursor rule; the articles link here.
///
/// **The rule.** The cursor on disk (``CursorFile``) says "every save up to
/// here was processed". A save counts as processed when the loop it was
/// handed to asks for the next one (a `for await` over ``GroupStore/saves()``),
/// when the synchronous handler it was given returned
/// (``GroupConfiguration/synchronousDelivery``), or, with
/// ``GroupConfiguration/notificationsCountAsProcessed``, when its notification
/// was posted; saves this member is not given (its own, out of scope) count
/// as processed. The cursor moves only to a position that is
/// (a) processed by every subscriber, and with no subscriber only once one
/// has processed it (a stream left with a save in hand, or ended by a
/// shutdown, holds its place after it is dropped; one ended with
/// ``SaveStream/cancel()`` does not): ``SaveFeed/safeCursor()`` says how far
/// that is, and the owner hands it in;
/// (b) a position between two transactions whose commit time is known (its
/// fingerprint, so a restored database is told apart);
/// (c) never below what was written already.
/// After a resync it waits until the resync itself is processed, so a
/// restart delivers it again if it was not. It is written at most every
/// ``GroupConfiguration/cursorFlushInterval`` while the store runs, when
/// delivery stops, and after that each time a loop finishes the save in its
/// hand (``SaveFeed``, `recordAfterStop`), until the store closes. So across
/// graceful stops each save is processed once, and a save in hand when the
/// process is killed comes again at the next start.
///
/// In memory, the positions that say where this member is are: how far the
/// merger read (``Merger/cursor``, mirrored for lock-free reads in
/// ``Delivery/publicCursor``), how far every subscriber processed (the feed's
/// safe cursor, last seen in ``lastSafe``), and what is on disk
/// (``persisted``); debug builds check at each change that none passes the
/// one before it.
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
    /// How far every subscriber had processed at the last look (-1: not looked yet).
    private(set) var lastSafe: Int64 = -1
    /// The newest transaction merged (read, delivered or passed).
    private var merged: Int64

    init(start: Merger.Start, persists: Bool) {
        self.persists = persists
        persisted = start.resync || !start.onDisk ? -1 : start.cursor.seq
        floor = start.resync ? -1 : start.cursor.seq
        base = start.cursor.seq
        hold = start.resync ? .untilResyncDelivered : .none
        merged = start.cursor.seq
        if let fingerprint = start.cursor.fingerprint { fingerprints[start.cursor.seq] = fingerprint }
        checkInvariants()
    }

    /// Transactions were merged (delivered, skipped, or this member's own).
    mutating func merged(seq: Int64, committedAt: Date) {
        fingerprints[seq] = committedAt.timeIntervalSince1970
        merged = max(merged, seq)
        checkInvariants()
    }

    /// A resync to `seq` was handed over: positions of the old history mean nothing.
    mutating func resynced(to seq: Int64) {
        fingerprints = [:]
        base = seq
        floor = -1
        persisted = -1
        lastSafe = -1
        merged = seq
        hold = .untilProcessed(seq)
        checkInvariants()
    }

    /// The member folder was re-created: the file must be written there again.
    mutating func folderReplaced() {
        persisted = -1
    }

    /// What the owner does with the cursor, given how far every subscriber
    /// has processed (`safe`, ``SaveFeed/safeCursor()``): the position to
    /// write (`nil`: nothing to write), and whether to look again shortly
    /// (subscribers are still working through merged saves, and made
    /// progress since the last look; else the safety tick looks, once a second).
    mutating func plan(safe: Int64) -> (write: (seq: Int64, fingerprint: Double?)?, again: Bool) {
        let again = safe < merged && safe != lastSafe
        lastSafe = safe
        return (positionToWrite(safe: safe), again)
    }

    /// The position to write now; `nil` when nothing is to be written.
    private mutating func positionToWrite(safe: Int64) -> (seq: Int64, fingerprint: Double?)? {
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
        checkInvariants()
    }

    /// In debug builds: what is on disk never passes what was merged, and
    /// what was written is never undercut by the floor.
    private func checkInvariants() {
        assert(persisted <= merged, "the cursor on disk (\(persisted)) passed what was merged (\(merged))")
        assert(persisted < 0 || floor <= persisted, "the floor (\(floor)) passed the cursor on disk (\(persisted))")
        assert(base <= merged, "the starting point (\(base)) passed what was merged (\(merged))")
    }
}
