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

/// Runs blocking work where it may block: inline when the current task runs
/// on an executor of its own (a `TaskExecutor` preference, such as the cloud
/// bridge's engine queue, a dispatch queue that is there to block), else off
/// the Swift concurrency pool (``offThePool(_:)``).
///
/// This is how a remote on this host (a SQLite file) does its work on the
/// sync engine's own thread, with no thread hand-off, while the same call
/// from any other task never blocks the shared pool.
package func blockingWork<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    if withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor != nil }) { return try body() }
    return try await offThePool(body)
}
