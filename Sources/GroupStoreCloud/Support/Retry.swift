import Foundation
import Logging

/// Retries remote calls that fail for now: jittered exponential backoff
/// from ``CloudSyncConfiguration/retryDelay``, or the remote's own delay
/// when it asks to slow down; gives up after a few tries (the sync then
/// fails and the next one starts over).
enum Retry {
    static let attempts = 8

    static func run<T: Sendable>(
        _ configuration: CloudSyncConfiguration, _ what: String, _ operation: @Sendable () async throws -> T
    ) async throws -> T {
        var delay = configuration.retryDelay
        var attempt = 1
        while true {
            do {
                return try await operation()
            } catch let error as CloudSyncError where error.isTransient && attempt < attempts {
                let wait = error.retryAfter ?? delay * Double.random(in: 0.5...1.5)
                configuration.logger.info(
                    "remote failed for now; retrying",
                    metadata: ["what": "\(what)", "attempt": "\(attempt)", "wait": "\(wait)", "error": "\(error.message)"])
                try await Task.sleep(nanoseconds: UInt64(max(0, min(wait, configuration.maxRetryDelay)) * 1e9))
                delay = min(delay * 2, configuration.maxRetryDelay)
                attempt += 1
            }
        }
    }
}

extension CloudSyncError {
    /// `error` as a ``CloudSyncError``: itself, or wrapped with `what` and kept as ``underlying``.
    static func wrap(_ error: any Error, _ what: String) -> CloudSyncError {
        if let error = error as? CloudSyncError { return error }
        if error is CancellationError { return CloudSyncError(.stopped, "stopped during \(what)", underlying: error) }
        return CloudSyncError(.store, "cannot \(what): \(error)", underlying: error)
    }
}
