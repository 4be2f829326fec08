import Dispatch
import Foundation
import Metrics
import Synchronization

/// Hands sync events to every ``CloudSync/events()`` subscriber, posts the
/// did-start / did-finish notifications, and keeps the metrics.
///
/// Nothing here waits for an observer: a subscriber's stream buffers, and
/// the notifications are posted in order from a queue of their own (as the
/// store's `SaveNotifier` posts its saves), so a slow `.cloudSyncDidFinish`
/// observer delays the next notification, never the next sync.
final class EventHub: Sendable {
    /// Posts the notifications, one at a time, in the order emitted.
    private let poster: DispatchQueue
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
        poster = DispatchQueue(label: "GroupStoreCloud.Events.\(label)")
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
            post(.cloudSyncDidStart, userInfo: nil)
        case .finished(let summary):
            pending.record(summary.pending)
            if summary.error == nil {
                lastSuccess.record(summary.finishedAt.timeIntervalSince1970)
            } else {
                failures.increment()
            }
            var info: [AnyHashable: Any] = ["summary": summary]
            if let error { info["error"] = error }
            post(.cloudSyncDidFinish, userInfo: info)
        case .conflict: conflicts.increment()
        case .parked: parked.increment()
        default: break
        }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    /// Posts a notification from ``poster``. The `userInfo` values are
    /// Sendable (a summary, an error) in a dictionary typed `Any`.
    private func post(_ name: Notification.Name, userInfo: [AnyHashable: Any]?) {
        let box = UserInfoBox(userInfo: userInfo)
        let object = self.object
        poster.async { NotificationCenter.default.post(name: name, object: object(), userInfo: box.userInfo) }
    }

    func finish() {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }
}

/// A notification's `userInfo` on its way to the poster's queue.
///
/// `@unchecked Sendable`: it holds a ``CloudSyncSummary`` and a
/// ``CloudSyncError``, both Sendable, in the `[AnyHashable: Any]` that
/// NotificationCenter takes, and is read once, on that queue.
private struct UserInfoBox: @unchecked Sendable {
    let userInfo: [AnyHashable: Any]?
}
