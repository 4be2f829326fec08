import Synchronization

/// Hands each element to every stream asked for with ``stream(bufferingNewest:)``,
/// while it is iterated: a fan-out of a remote's notifications (``PushHints``
/// is the element-less form, with its own-origin rule).
package final class Broadcast<Element: Sendable>: Sendable {
    private let continuations = Mutex<[UInt64: AsyncStream<Element>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)

    package init() {}

    /// A stream of what is yielded from now on, keeping at most `limit`
    /// elements not read yet (the newest).
    package func stream(bufferingNewest limit: Int = 64) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(limit))
        let id = nextID.add(1, ordering: .relaxed).newValue
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// Hands `element` to every stream.
    package func yield(_ element: Element) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(element) }
    }

    /// Hands `element` to every stream, and `marker` after it to those whose
    /// buffer was full (they dropped their oldest element to keep this one),
    /// so that a reader behind learns it missed something (a notice of any
    /// zone, for the remote's notices).
    package func yield(_ element: Element, droppedSaying marker: Element) {
        for continuation in continuations.withLock({ Array($0.values) }) {
            if case .dropped = continuation.yield(element) { continuation.yield(marker) }
        }
    }

    /// How many streams are open.
    package var count: Int { continuations.withLock { $0.count } }

    package func finish() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
