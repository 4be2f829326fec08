import Dispatch
import Foundation
import Synchronization

/// Posts `.groupStoreDidSave` for delivered saves, in order, from a queue of
/// its own: never the delivery's, so an observer on any queue (`nil`, a private
/// `OperationQueue`, the main queue) may call any API of the store — which may
/// wait for the delivery's queue — without a deadlock, and a slow observer delays only
/// later notifications, never merging. The saves waiting for a slow observer
/// are held in memory, without a bound (a stream's are bounded).
final class SaveNotifier: Sendable {
    private let queue: DispatchQueue
    private let closed = Mutex(false)
    private let object: @Sendable () -> AnyObject?
    private let posted: (@Sendable (_ seq: Int64, _ generation: Int) -> Void)?
    private let enabled: Bool

    /// - Parameters:
    ///   - object: the notification's `object` (the store, held weakly).
    ///   - posted: told each save's sequence number (and the feed's generation
    ///     it was posted in) once its notification was posted (every observer
    ///     has run), when notifications count as processing.
    ///   - enabled: whether to post at all (``GroupConfiguration/postsNotifications``).
    init(
        label: String, object: @escaping @Sendable () -> AnyObject?, posted: (@Sendable (Int64, Int) -> Void)? = nil,
        enabled: Bool = true
    ) {
        queue = DispatchQueue(label: label)
        self.enabled = enabled
        self.object = object
        self.posted = posted
    }

    /// Posts `saves`, delivered in the feed's `generation` (see ``SaveFeed/generation``).
    func post(_ saves: [Save], generation: Int) {
        guard !saves.isEmpty else { return }
        guard enabled else {
            // Nothing to post: with notifications counting as processing,
            // the saves are processed now.
            if let posted { for save in saves { posted(save.seq, generation) } }
            return
        }
        queue.async { [self] in
            for save in saves {
                if closed.withLock({ $0 }) { return }
                NotificationCenter.default.post(
                    name: .groupStoreDidSave, object: object(), userInfo: [GroupStore.saveUserInfoKey: save])
                posted?(save.seq, generation)
            }
        }
    }

    /// Posts nothing more (does not wait for a notification being posted:
    /// the store may be closing from inside an observer).
    func close() {
        closed.withLock { $0 = true }
    }
}
