import Foundation
import Synchronization

/// Faults a remote injects on purpose (``MemoryRemote``, and the embedded
/// remote, where it is named `EmbeddedRemoteFaults`), so tests (and spawned
/// processes, through ``init(environment:)``) can drive the bridge through
/// the failures a real server produces: transient errors, rate limiting,
/// expired tokens, small batch limits and conflicts that never settle.
///
/// Thread-safe: every knob is kept in one `Mutex`, so a test may change them
/// while the bridge runs.
///
/// ```swift
/// let faults = RemoteFaults()
/// faults.failNext(3)                    // the next 3 calls throw .transient
/// faults.maxBatchRecords = 50           // larger modify batches: .batchTooLarge
/// let remote = MemoryRemote(user: "alice", faults: faults)
/// ```
public final class RemoteFaults: Sendable {
    /// The environment variable ``init(environment:)`` reads.
    public static let environmentVariable = "GROUPSTORE_REMOTE_FAULTS"

    /// The batch limit when none is set: as many records as one `modify` takes.
    public static let defaultMaxBatchRecords = 400

    private struct State {
        var failing = 0
        var rateLimiting = 0
        var retryAfter: TimeInterval = 0.2
        var expiring = 0
        var maxBatchRecords = RemoteFaults.defaultMaxBatchRecords
        var conflictOnEverySave = false
    }

    private let state = Mutex(State())

    /// No faults: the remote behaves like a healthy server.
    public init() {}

    /// Faults described by `GROUPSTORE_REMOTE_FAULTS` in `environment`: a
    /// comma-separated list of `key=value` among
    ///
    /// - `fail=N`: the next N calls throw ``CloudSyncError/Code/transient``;
    /// - `ratelimit=N`: the next N calls throw ``CloudSyncError/Code/rateLimited``;
    /// - `retry-after=S`: the delay (seconds) rate-limited calls ask for (0.2 by default);
    /// - `expire=N`: the next N fetches with a token throw ``CloudSyncError/Code/tokenExpired``;
    /// - `maxbatch=N`: ``maxBatchRecords``;
    /// - `conflict-always=1`: ``conflictOnEverySave``.
    ///
    /// Unknown keys and unreadable values are ignored.
    public convenience init(environment: [String: String]) {
        self.init()
        guard let spec = environment[Self.environmentVariable] else { return }
        state.withLock { state in
            for item in spec.split(separator: ",") {
                let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { continue }
                let value = parts[1]
                switch parts[0].lowercased() {
                case "fail": if let n = Int(value), n >= 0 { state.failing = n }
                case "ratelimit": if let n = Int(value), n >= 0 { state.rateLimiting = n }
                case "retry-after": if let s = TimeInterval(value), s >= 0, s.isFinite { state.retryAfter = s }
                case "expire": if let n = Int(value), n >= 0 { state.expiring = n }
                case "maxbatch": if let n = Int(value), n > 0 { state.maxBatchRecords = n }
                case "conflict-always": state.conflictOnEverySave = ["1", "true", "yes"].contains(value.lowercased())
                default: continue
                }
            }
        }
    }

    /// The next `n` remote calls (every ``CloudDatabase`` method but
    /// `pushHints()`) throw ``CloudSyncError/Code/transient`` and do nothing.
    public func failNext(_ n: Int) {
        state.withLock { $0.failing = max(0, n) }
    }

    /// The next `n` remote calls throw ``CloudSyncError/Code/rateLimited``
    /// asking to wait `retryAfter` seconds, and do nothing. Counted after
    /// ``failNext(_:)``'s calls.
    public func rateLimitNext(_ n: Int, retryAfter: TimeInterval) {
        state.withLock {
            $0.rateLimiting = max(0, n)
            $0.retryAfter = max(0, retryAfter)
        }
    }

    /// The next `fetchChanges` given a token throws
    /// ``CloudSyncError/Code/tokenExpired``.
    public func expireTokensOnce() {
        state.withLock { $0.expiring += 1 }
    }

    /// The most records one `modify` accepts; more throw
    /// ``CloudSyncError/Code/batchTooLarge``. 400 by default.
    public var maxBatchRecords: Int {
        get { state.withLock { $0.maxBatchRecords } }
        set { state.withLock { $0.maxBatchRecords = max(1, newValue) } }
    }

    /// Every save with a base tag (to a record that exists) answers a
    /// conflict after the remote bumped the record's tag: a conflict that
    /// never settles, to check the bridge gives up after a few rounds.
    public var conflictOnEverySave: Bool {
        get { state.withLock { $0.conflictOnEverySave } }
        set { state.withLock { $0.conflictOnEverySave = newValue } }
    }

    /// Called at the start of every remote call: throws the fault due, if any.
    package func beforeCall(_ operation: String, remote: String) throws(CloudSyncError) {
        enum Due { case none, fail, rateLimit(TimeInterval) }
        let due: Due = state.withLock { state in
            if state.failing > 0 {
                state.failing -= 1
                return .fail
            }
            if state.rateLimiting > 0 {
                state.rateLimiting -= 1
                return .rateLimit(state.retryAfter)
            }
            return .none
        }
        switch due {
        case .none: return
        case .fail:
            throw CloudSyncError(.transient, "the remote \(remote) failed to \(operation) (injected fault)")
        case .rateLimit(let delay):
            throw CloudSyncError(
                .rateLimited, "the remote \(remote) asks to retry \(operation) in \(delay) s (injected fault)", retryAfter: delay)
        }
    }

    /// Whether this fetch with a token must expire it (consumes the fault).
    package func consumeTokenExpiry() -> Bool {
        state.withLock { state in
            guard state.expiring > 0 else { return false }
            state.expiring -= 1
            return true
        }
    }
}
