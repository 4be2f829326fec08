import Dispatch
import Foundation
import Synchronization

/// Posts `.groupStoreDidSave` for delivered saves, in order, from a queue of
/// its own: never the delivery's, so an observer on any queue (`nil`, a private
/// `OperationQueue`, the main queue) may call any API of the store — which may
/// wait for the delivery's queue — without a deadlock, and a slow observer delays only
/// later notifications, never merging. The saves waiting for a slow observer
/// are held in memory, without a bound (a stream's are bounded).
///
/// It also keeps what its owner's periodic look needs to tell when saves
/// reach nobody (``activity``): a post that does not return (an observer on
/// `.main` while the main thread is blocked never runs, and Foundation's
/// `post` waits for it), and whether anything was posted at all.
final class SaveNotifier: Sendable {
    /// What the notifier has done so far.
    struct Activity: Sendable {
        /// Saves posted since the notifier was made (each counted when its post began).
        var posts = 0
        /// When the post in progress began, if one is.
        var postingSince: DispatchTime?
    }

    private let queue: DispatchQueue
    private let closed = Mutex(false)
    private let progress = Mutex(Activity())
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
                progress.withLock {
                    $0.posts += 1
                    $0.postingSince = .now()
                }
                NotificationCenter.default.post(
                    name: .groupStoreDidSave, object: object(), userInfo: [GroupStore.saveUserInfoKey: save])
                progress.withLock { $0.postingSince = nil }
                posted?(save.seq, generation)
            }
        }
    }

    /// What the notifier has done so far.
    var activity: Activity { progress.withLock { $0 } }

    /// Whether a posted save counts as processed (``GroupConfiguration/notificationsCountAsProcessed``).
    var countsAsProcessing: Bool { posted != nil }

    /// Posts nothing more (does not wait for a notification being posted:
    /// the store may be closing from inside an observer).
    func close() {
        closed.withLock { $0 = true }
    }
}
