import Dispatch

/// Runs blocking work (opening a database, a migration, a store's start) on
/// a dispatch queue, off the Swift concurrency pool, and awaits its result.
package enum OffPool {
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }
}
