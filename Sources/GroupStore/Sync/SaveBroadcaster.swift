import Synchronization

/// Fans delivered saves out to every subscriber, and knows how far each has
/// processed them, so the durable cursor never passes a save a subscriber was
/// still holding when the process died.
final class SaveBroadcaster: Sendable {
    private struct Subscriber {
        var continuation: AsyncStream<Save>.Continuation
        /// Saves yielded to it and not yet processed.
        var unprocessed = 0
        /// While `unprocessed > 0`: everything up to here is processed.
        var floor: Int64?
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = Mutex(State())

    /// A new stream of every save delivered from now on; it finishes when the store closes.
    func subscribe() -> SaveStream {
        let (stream, continuation) = AsyncStream<Save>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state -> Int? in
            if state.finished { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(continuation: continuation)
            return id
        }
        guard let id else {
            continuation.finish()
            return SaveStream(base: stream, id: -1, broadcaster: self)
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return SaveStream(base: stream, id: id, broadcaster: self)
    }

    /// Yields `save` to every subscriber; `cursorBefore` is the cursor just
    /// before it (everything up to there was delivered earlier).
    func deliver(_ save: Save, cursorBefore: Int64) {
        let continuations = state.withLock { state -> [AsyncStream<Save>.Continuation] in
            for id in state.subscribers.keys {
                if state.subscribers[id]!.unprocessed == 0 { state.subscribers[id]!.floor = cursorBefore }
                state.subscribers[id]!.unprocessed += 1
            }
            return state.subscribers.values.map(\.continuation)
        }
        for continuation in continuations { continuation.yield(save) }
    }

    /// Subscriber `id` is done with the save `seq` (it asked for the next one).
    func processed(_ seq: Int64, by id: Int) {
        state.withLock { state in
            guard var subscriber = state.subscribers[id], subscriber.unprocessed > 0 else { return }
            subscriber.unprocessed -= 1
            subscriber.floor = subscriber.unprocessed == 0 ? nil : seq
            state.subscribers[id] = subscriber
        }
    }

    /// The highest cursor that is safe to persist: `cursor`, or less while a
    /// subscriber still holds saves it has not processed.
    func safeCursor(_ cursor: Int64) -> Int64 {
        state.withLock { state in
            state.subscribers.values.reduce(cursor) { safe, subscriber in
                subscriber.unprocessed > 0 ? min(safe, subscriber.floor ?? safe) : safe
            }
        }
    }

    func finish() {
        let subscribers = state.withLock { state -> [AsyncStream<Save>.Continuation] in
            state.finished = true
            return state.subscribers.values.map(\.continuation)
        }
        for continuation in subscribers { continuation.finish() }
    }
}
