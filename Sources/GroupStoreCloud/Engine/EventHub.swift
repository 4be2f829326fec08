import Foundation
import Metrics
import Synchronization

/// Hands sync events to every ``CloudSync/events()`` subscriber, posts the
/// did-start / did-finish notifications, and keeps the metrics.
final class EventHub: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<CloudSyncEvent>.Continuation]>([:])
    private let nextID = Mutex(0)
    private let object: @Sendable () -> AnyObject?
    private let pending: Gauge
    private let lastSuccess: Gauge
    private let conflicts: Counter
    private let parked: Counter
    private let failures: Counter

    init(label: String, object: @escaping @Sendable () -> AnyObject?) {
        self.object = object
        let dimensions = [("bridge", label)]
        pending = Gauge(label: "groupstore_cloud_pending_uploads", dimensions: dimensions)
        lastSuccess = Gauge(label: "groupstore_cloud_last_success_seconds", dimensions: dimensions)
        conflicts = Counter(label: "groupstore_cloud_conflicts_total", dimensions: dimensions)
        parked = Counter(label: "groupstore_cloud_parked_total", dimensions: dimensions)
        failures = Counter(label: "groupstore_cloud_sync_failures_total", dimensions: dimensions)
    }

    func subscribe() -> AsyncStream<CloudSyncEvent> {
        let (stream, continuation) = AsyncStream<CloudSyncEvent>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let id = nextID.withLock { id in
            defer { id += 1 }
            return id
        }
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    func emit(_ event: CloudSyncEvent, error: CloudSyncError? = nil) {
        switch event {
        case .started:
            NotificationCenter.default.post(name: .cloudSyncDidStart, object: object())
        case .finished(let summary):
            pending.record(summary.pending)
            if summary.error == nil {
                lastSuccess.record(summary.finishedAt.timeIntervalSince1970)
            } else {
                failures.increment()
            }
            var info: [AnyHashable: Any] = ["summary": summary]
            if let error { info["error"] = error }
            NotificationCenter.default.post(name: .cloudSyncDidFinish, object: object(), userInfo: info)
        case .conflict: conflicts.increment()
        case .parked: parked.increment()
        default: break
        }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    func finish() {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
