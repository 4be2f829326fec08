import Dispatch
import Foundation
import Synchronization

/// Posts `.groupStoreDidSave` for delivered saves, in order, from a queue of
/// its own: never the merger's, so an observer on any queue (`nil`, a private
/// `OperationQueue`, the main queue) may call any API of the store — which may
/// wait for the merger — without a deadlock, and a slow observer delays only
/// later notifications, never merging.
final class SaveNotifier: Sendable {
    private let queue: DispatchQueue
    private let closed = Mutex(false)
    private let object: @Sendable () -> AnyObject?

    /// - Parameter object: the notification's `object` (the store, held weakly).
    init(label: String, object: @escaping @Sendable () -> AnyObject?) {
        queue = DispatchQueue(label: label)
        self.object = object
    }

    func post(_ saves: [Save]) {
        guard !saves.isEmpty else { return }
        queue.async { [self] in
            for save in saves {
                if closed.withLock({ $0 }) { return }
                NotificationCenter.default.post(
                    name: .groupStoreDidSave, object: object(), userInfo: [GroupStore.saveUserInfoKey: save])
            }
        }
    }

    /// Posts nothing more (does not wait for a notification being posted:
    /// the store may be closing from inside an observer).
    func close() {
        closed.withLock { $0 = true }
    }
}
