import Foundation
import Synchronization

/// Hands each push hint to every stream asked for with ``stream()``.
final class PushHints: Sendable {
    private let continuations = Mutex<[UInt64: AsyncStream<Void>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)

    func stream() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = nextID.add(1, ordering: .relaxed).newValue
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    func yield() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield() }
    }

    func finish() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
