import Dispatch

/// Runs blocking work (file I/O, waiting for a serial queue, SQLite) on a
/// dispatch thread and awaits it, so a thread of the Swift concurrency pool
/// is never blocked.
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

/// ``offThePool(_:)`` for work that cannot fail.
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}
