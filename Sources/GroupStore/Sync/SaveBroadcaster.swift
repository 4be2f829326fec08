import Synchronization

/// Fans delivered saves out to every `AsyncStream` subscriber.
final class SaveBroadcaster: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<Save>.Continuation] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = Mutex(State())

    /// A new stream of every save delivered from now on; it finishes when the store closes.
    func subscribe() -> AsyncStream<Save> {
        let (stream, continuation) = AsyncStream<Save>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state -> Int? in
            if state.finished { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func deliver(_ save: Save) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for continuation in subscribers { continuation.yield(save) }
    }

    func finish() {
        let subscribers = state.withLock { state -> [AsyncStream<Save>.Continuation] in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }
}
