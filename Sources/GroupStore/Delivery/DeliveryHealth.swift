import Dispatch

/// Tells, from the delivery's once-a-second safety tick, when the saves it
/// hands over reach nobody, so a store set up that way says so in its log
/// instead of going silently deaf:
/// - a `.groupStoreDidSave` post has not returned for ``stalledPost``: its
///   observer runs on a thread that is blocked (an observer on `.main` while
///   the main thread sleeps or waits synchronously never runs, and
///   Foundation's `post` waits for it), so every later save waits too;
/// - saves were posted for ``unprocessedPosts`` and nothing processes them:
///   no `saves()` loop ever subscribed, no synchronous handler, and
///   notifications do not count as processing, so the member's cursor stays
///   where it was, the same saves are posted again after a restart, and the
///   history is kept for it (a member that only observes sets
///   ``GroupConfiguration/notificationsCountAsProcessed``).
///
/// A value owned by ``Delivery`` and touched on its queue only.
struct DeliveryHealth {
    static let stalledPost: Double = 3
    static let unprocessedPosts: Double = 5

    enum Warning: Equatable {
        /// The post in progress began this many seconds ago.
        case postStalled(seconds: Int)
        /// Saves are posted, and nothing processes them.
        case postsNotProcessed
    }

    /// When the stalled post that was reported began (each stall is reported once).
    private var reportedStall: DispatchTime?
    /// When the first unprocessed post was seen, until it is reported.
    private var unprocessedSince: DispatchTime?
    private var reportedUnprocessed = false

    /// What to report now.
    /// - Parameter processing: a subscriber, a synchronous handler or the
    ///   notifications themselves count saves as processed.
    mutating func look(now: DispatchTime, notifier: SaveNotifier.Activity, processing: Bool) -> [Warning] {
        var warnings: [Warning] = []
        if let since = notifier.postingSince, since != reportedStall {
            let seconds = Double(now.uptimeNanoseconds &- since.uptimeNanoseconds) / 1e9
            if seconds >= Self.stalledPost {
                reportedStall = since
                warnings.append(.postStalled(seconds: Int(seconds)))
            }
        }
        if !reportedUnprocessed, notifier.posts > 0, !processing {
            let since = unprocessedSince ?? now
            unprocessedSince = since
            if Double(now.uptimeNanoseconds &- since.uptimeNanoseconds) / 1e9 >= Self.unprocessedPosts {
                reportedUnprocessed = true
                warnings.append(.postsNotProcessed)
            }
        }
        return warnings
    }
}
