import Synchronization

/// A flag that can be set once, from any thread.
final class StartFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Sets the flag; returns `true` for the one caller that set it.
    func setOnce() -> Bool {
        flag.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    var value: Bool { flag.load(ordering: .acquiring) }
}
