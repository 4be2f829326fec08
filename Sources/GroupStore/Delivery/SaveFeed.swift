import Synchronization

/// Hands delivered saves to every subscriber, each at its own pace, and knows
/// how far they have processed them.
///
/// ```
/// delivery ── append ──▶ buffer (floor, merged]  ──▶ subscriber A (position)
///                        │ bounded: oldest dropped ──▶ subscriber B, behind the floor:
///                        ▼                               reads the history instead
///               durable cursor = what every subscriber has processed
/// ```
///
/// - A subscriber starts after the last save any subscriber processed (at
///   first, the member's durable cursor), whenever it subscribes: before the
///   store starts, after, or one `await` late. Saves committed while no
///   subscriber existed are kept for the first one.
/// - A slow subscriber costs little memory beyond the buffer: once it is
///   behind the buffer's floor, it reads the history instead, a page
///   (``HistoryPage``, up to ``HistoryPageReader/pageSize`` saves) at a time,
///   which it holds until it has taken them.
/// - It says how far every subscriber has processed (``safeCursor()``), the
///   first part of the cursor rule (``CursorKeeper`` states it whole): a
///   stream left unfinished keeps its place after it is dropped (`held`),
///   and once delivery has stopped, each save a loop finishes has the cursor
///   written before the loop goes on (`recordAfterStop`).
final class SaveFeed: Sendable {
    /// Saves read from the history for a subscriber behind the buffer.
    struct HistoryPage: Sendable {
        var saves: [Save]
        /// Everything up to here was read (or pruned, then `saves` starts with
        /// a resync).
        var through: Int64
    }

    typealias HistoryRead = @Sendable (_ after: Int64, _ through: Int64) async -> HistoryPage?

    /// Saves kept in memory at most.
    static let bufferLimit = 1024

    private struct Subscriber {
        /// Everything up to here is processed.
        var position: Int64
        /// Handed out, not processed yet.
        var inHand: Int64?
        /// Read from the history for it, not handed out yet.
        /// Newest first, so the next one is taken from the end.
        var pending: [Save] = []
        var waiter: CheckedContinuation<Void, Never>?
        var ended = false
    }

    private struct State {
        var buffer = SaveBuffer()
        /// The buffer holds every deliverable save in (floor, merged].
        var floor: Int64
        var merged: Int64
        /// The last save some subscriber processed: where new ones start.
        var processed: Int64
        var subscribers: [Int: Subscriber] = [:]
        /// The lowest place of the streams that ended (cancelled or shut
        /// down) and were dropped since, until a subscriber takes it over.
        var held: Int64?
        var nextID = 0
        var finished = false
        /// Delivery stopped; the member's lock is still held.
        var deliveryStopped = false
        /// Moves at each resync: work begun before it (a page read for a
        /// subscriber, a notification posted) no longer counts after it.
        var generation = 0
    }

    private let state: Mutex<State>
    private let readHistory: HistoryRead
    /// Counts each read of the history for a subscriber behind the buffer.
    private let fellBack: @Sendable () -> Void
    /// Writes the cursor as far as ``safeCursor()`` allows, after delivery
    /// stopped (awaited by the subscriber that marked a save processed).
    private let recordAfterStop: @Sendable () async -> Void

    init(
        cursor: Int64, readHistory: @escaping HistoryRead, fellBack: @escaping @Sendable () -> Void = {},
        recordAfterStop: @escaping @Sendable () async -> Void = {}
    ) {
        state = Mutex(State(floor: cursor, merged: cursor, processed: cursor))
        self.readHistory = readHistory
        self.fellBack = fellBack
        self.recordAfterStop = recordAfterStop
    }

    /// Delivery stopped while the store stays open (its service was shut
    /// down gracefully): from now on, each save a subscriber finishes is
    /// recorded before it is handed the next one.
    func deliveryStopped() {
        state.withLock { $0.deliveryStopped = true }
    }

    /// A new stream; see ``GroupStore/saves()``. `beforeFirst` runs when it
    /// is first asked for a save.
    func subscribe(beforeFirst: @escaping @Sendable () async -> Void = {}) -> SaveStream {
        let id = state.withLock { state -> Int in
            let id = state.nextID
            state.nextID += 1
            // It takes over the place of streams that ended unfinished.
            state.subscribers[id] = Subscriber(position: state.held ?? state.processed, ended: state.finished)
            state.held = nil
            return id
        }
        return SaveStream(feed: self, id: id, beforeFirst: beforeFirst)
    }

    /// The history was read up to `merged`; `saves` are the deliverable ones.
    func append(_ saves: [Save], merged: Int64) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.finished else { return [] }
            state.buffer.append(contentsOf: saves)
            state.merged = merged
            Self.trim(&state)
            // With nothing new, no waiter has anything to take (trimming
            // drops only what every subscriber is past).
            return saves.isEmpty ? [] : Self.takeWaiters(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The history was replaced, restored or pruned past this member: every
    /// subscriber gets `save` (a resync) next, and numbering goes on after
    /// it, even when it is lower than where they were.
    func resync(_ save: Save) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.finished else { return [] }
            state.generation += 1
            state.buffer.replace(with: [save])
            state.floor = save.seq - 1
            state.merged = save.seq
            state.processed = save.seq - 1
            if state.held != nil { state.held = save.seq - 1 }
            for id in state.subscribers.keys {
                state.subscribers[id]!.position = save.seq - 1
                state.subscribers[id]!.inHand = nil
                state.subscribers[id]!.pending = []
            }
            return Self.takeWaiters(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether any stream ever subscribed.
    var hasHadSubscriber: Bool { state.withLock { $0.nextID > 0 } }

    /// How many resyncs the feed has had (see ``markProcessed(_:generation:)``).
    var generation: Int { state.withLock { $0.generation } }

    /// Save `seq` was handled outside the streams (its notification was
    /// posted, and notifications count as processing), having been delivered
    /// in `generation`: from before a resync, it is ignored.
    func markProcessed(_ seq: Int64, generation: Int) {
        state.withLock { state in
            guard generation == state.generation else { return }
            state.processed = max(state.processed, seq)
            Self.trim(&state)
        }
    }

    /// Ends every stream (the store closed).
    func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.finished = true
            return Self.takeWaiters(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The highest cursor safe to persist: every deliverable save up to it
    /// was processed by every subscriber (by one, when there are none).
    func safeCursor() -> Int64 {
        state.withLock { state in
            func upTo(after position: Int64) -> Int64 {
                if position < state.floor { return position }
                if let next = state.buffer.first(after: position) { return max(position, next.seq - 1) }
                return state.merged
            }
            let held = state.held.map(upTo(after:))
            if state.subscribers.isEmpty { return held ?? upTo(after: state.processed) }
            let live = state.subscribers.values.map { subscriber in
                subscriber.inHand != nil || !subscriber.pending.isEmpty ? subscriber.position : upTo(after: subscriber.position)
            }.min()!
            return min(live, held ?? live)
        }
    }

    func end(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.subscribers[id]?.ended = true
            defer { state.subscribers[id]?.waiter = nil }
            return state.subscribers[id]?.waiter
        }
        waiter?.resume()
    }

    /// The stream was dropped (no copy of it is left): one whose loop was
    /// ended (cancelled, shut down) or left with a save in hand (a `break`, a
    /// thrown error) leaves its place ``held``; any other lets go of it.
    func dropped(_ id: Int) {
        remove(id, keepingAnUnfinishedPlace: true)
    }

    /// The stream lets go of its place (``SaveStream/cancel()``).
    func remove(_ id: Int) {
        remove(id, keepingAnUnfinishedPlace: false)
    }

    private func remove(_ id: Int, keepingAnUnfinishedPlace: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let subscriber = state.subscribers.removeValue(forKey: id) else { return nil }
            if keepingAnUnfinishedPlace && (subscriber.ended || subscriber.inHand != nil) && !state.finished {
                state.held = min(state.held ?? subscriber.position, subscriber.position)
            }
            Self.trim(&state)
            return subscriber.waiter
        }
        waiter?.resume()
    }

    private enum Step {
        case deliver(Save)
        case end
        case wait
        case read(after: Int64, through: Int64, generation: Int)
    }

    /// The next save for subscriber `id`, after marking the one in its hand
    /// processed; `nil` once the stream ends.
    func next(_ id: Int) async -> Save? {
        var recordNow = false
        while true {
            let step = state.withLock { state -> Step in
                // Taken out of the dictionary while it changes, so its
                // pending saves are not copied (a copy per save made a
                // subscriber that read the history slower the further it
                // was behind).
                guard var subscriber = state.subscribers.removeValue(forKey: id) else { return .end }
                defer { state.subscribers[id] = subscriber }
                // Asking for the next save is what marks the one in hand
                // processed, even when the stream has ended meanwhile.
                if let seq = subscriber.inHand {
                    subscriber.position = seq
                    subscriber.inHand = nil
                    state.processed = max(state.processed, seq)
                    recordNow = state.deliveryStopped && !state.finished
                }
                guard !subscriber.ended else { return .end }
                // The store closed: its cursor is written; what is left
                // comes again at the next start.
                if state.finished { return .end }
                if !subscriber.pending.isEmpty {
                    let save = subscriber.pending.removeLast()
                    subscriber.inHand = save.seq
                    return .deliver(save)
                }
                if subscriber.position < state.floor {
                    return .read(after: subscriber.position, through: state.floor, generation: state.generation)
                }
                if let save = state.buffer.first(after: subscriber.position) {
                    subscriber.inHand = save.seq
                    return .deliver(save)
                }
                return state.finished ? .end : .wait
            }
            if recordNow {
                recordNow = false
                await recordAfterStop()
            }
            switch step {
            case .deliver(let save):
                state.withLock { Self.trim(&$0) }
                return save
            case .end:
                return nil
            case .read(let after, let through, let generation):
                fellBack()
                guard let page = await readHistory(after, through) else {
                    // The history cannot be read now (the store closed): end.
                    return nil
                }
                state.withLock { state in
                    // A resync meanwhile: the page is of the history before it.
                    guard state.subscribers[id] != nil, state.generation == generation else { return }
                    state.subscribers[id]!.pending = page.saves.reversed()
                    if page.saves.isEmpty { state.subscribers[id]!.position = max(after, page.through) }
                }
            case .wait:
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> Bool in
                        guard var subscriber = state.subscribers[id], !subscriber.ended, !state.finished else { return true }
                        if subscriber.position < state.floor || state.buffer.first(after: subscriber.position) != nil {
                            return true
                        }
                        subscriber.waiter = continuation
                        state.subscribers[id] = subscriber
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }

    /// ``next(_:)``, and then every save that follows it at once (up to
    /// `limit` in all) without waiting: all are in the subscriber's hand
    /// until it asks again, which marks them processed together.
    func nextBatch(_ id: Int, limit: Int) async -> [Save]? {
        guard let first = await next(id) else { return nil }
        var batch = [first]
        state.withLock { state in
            guard var subscriber = state.subscribers.removeValue(forKey: id) else { return }
            defer { state.subscribers[id] = subscriber }
            while batch.count < limit, let inHand = subscriber.inHand {
                if !subscriber.pending.isEmpty {
                    let save = subscriber.pending.removeLast()
                    subscriber.inHand = save.seq
                    batch.append(save)
                } else if inHand >= state.floor, let save = state.buffer.first(after: inHand) {
                    subscriber.inHand = save.seq
                    batch.append(save)
                } else {
                    break
                }
            }
        }
        return batch
    }

    /// Drops saves every subscriber (and, with none, the last processed
    /// position) is past, then the oldest beyond the limit.
    private static func trim(_ state: inout State) {
        var low = min(state.processed, state.held ?? state.processed)
        for subscriber in state.subscribers.values { low = min(low, subscriber.position) }
        if let dropped = state.buffer.drop(through: low) {
            state.floor = max(state.floor, dropped)
        }
        if state.buffer.count > bufferLimit, let dropped = state.buffer.dropOldest(state.buffer.count - bufferLimit) {
            state.floor = dropped
        }
    }

    private static func takeWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        var waiters: [CheckedContinuation<Void, Never>] = []
        for id in state.subscribers.keys {
            if let waiter = state.subscribers[id]!.waiter {
                waiters.append(waiter)
                state.subscribers[id]!.waiter = nil
            }
        }
        return waiters
    }
}
