import Foundation
import Synchronization

/// A remote whose fetches may find changes held back by a transaction fence
/// (PostgreSQL's: entries of transactions still open) hints its engine again
/// shortly, since the commit that releases them may send no notification:
/// after 20 ms, doubling while they stay held back, up to a second. One poll
/// is due at a time; a fetch that found nothing held back resets the delay.
package final class FencePoll: Sendable {
    private let state = Mutex((scheduled: false, delay: FencePoll.firstDelay))
    package static let firstDelay = 0.02
    package static let maxDelay = 1.0

    package init() {}

    /// A fetch answered; `hint` is called once the poll is due, if one was scheduled.
    package func fetched(heldBack: Bool, hint: @escaping @Sendable () -> Void) {
        let delay: Double? = state.withLock { state in
            guard heldBack else {
                state.delay = Self.firstDelay
                return nil
            }
            guard !state.scheduled else { return nil }
            state.scheduled = true
            defer { state.delay = min(state.delay * 2, Self.maxDelay) }
            return state.delay
        }
        guard let delay else { return }
        Task { [self] in
            try? await Task.sleep(for: .seconds(delay))
            state.withLock { $0.scheduled = false }
            hint()
        }
    }
}
