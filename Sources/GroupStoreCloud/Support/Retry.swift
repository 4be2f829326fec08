import Foundation
import Logging

/// Retries remote calls that fail for now: jittered exponential backoff
/// from ``CloudSyncConfiguration/retryDelay``, or the remote's own delay
/// when it asks to slow down; gives up after a few tries (the sync then
/// fails and the next one starts over).
enum Retry {
    static let attempts = 8

    /// Runs `operation` (in the caller's isolation: the engine's calls stay
    /// on its queue) until it succeeds, fails for good, or has failed
    /// ``attempts`` times.
    static func run<T>(
        _ configuration: CloudSyncConfiguration, _ what: String, isolation: isolated (any Actor)? = #isolation,
        _ operation: () async throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await operation()
            } catch let error as CloudSyncError where error.isTransient && attempt < attempts {
                let wait = min(error.retryAfter ?? delay(afterFailure: attempt, configuration), configuration.maxRetryDelay)
                configuration.logger.info(
                    "remote failed for now; retrying",
                    metadata: ["what": "\(what)", "attempt": "\(attempt)", "wait": "\(wait)", "error": "\(error.message)"])
                try await Task.sleep(nanoseconds: UInt64(max(0, wait) * 1e9))
                attempt += 1
            }
        }
    }

    /// The wait after the `failure`th failure in a row (from 1): the first
    /// delay doubled each time, capped, jittered by ±50 %, and never longer
    /// than ``CloudSyncConfiguration/maxRetryDelay``.
    static func delay(afterFailure failure: Int, _ configuration: CloudSyncConfiguration) -> TimeInterval {
        let base = min(configuration.retryDelay * pow(2, Double(min(failure - 1, 30))), configuration.maxRetryDelay)
        return min(base * Double.random(in: 0.5...1.5), configuration.maxRetryDelay)
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
