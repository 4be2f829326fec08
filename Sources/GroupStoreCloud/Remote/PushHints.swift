import Foundation
import Synchronization

/// Hands each push hint to every stream asked for with ``stream()``.
///
/// A notification sent by this remote's own writes (its payload is the
/// remote's origin) is no hint for a sole stream: the one sync engine
/// reading it made those writes and has their tags from the answer, so a
/// fetch would bring back only its echo. With several streams it is handed
/// to all of them, since another engine may share the remote.
package final class PushHints: Sendable {
    private let continuations = Mutex<[UInt64: AsyncStream<Void>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)

    package init() {}

    package func stream() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = nextID.add(1, ordering: .relaxed).newValue
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    package func yield() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield() }
    }

    /// A notification whose payload is `origin`: handed on unless it is
    /// `own` and there is one stream.
    package func yield(from origin: String, own: String) {
        let streams = continuations.withLock { Array($0.values) }
        if origin == own, streams.count == 1 { return }
        for continuation in streams { continuation.yield() }
    }

    package func finish() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
