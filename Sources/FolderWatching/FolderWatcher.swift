import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Watches directories (and single files) with one inotify instance and
/// reports what changed in batches.
///
/// The descriptor is read by a thread of the watcher's own (never the Swift
/// concurrency pool's), which runs the handler on the watcher's serial queue
/// with every event read in one go (coalesced): with `DispatchQueue.sync`, so
/// on that same thread when the queue is idle, and an event costs one thread
/// wake-up. Reading pauses while the handler runs, so a slow handler leads to
/// ``Event/Kind/overflow`` rather than unbounded memory.
///
/// ```swift
/// let watcher = try FolderWatcher { events in
///     for event in events where event.kind == .movedIn { print("new:", event.name!) }
/// }
/// try watcher.watch("/srv/inbox", for: .movedIn)
/// watcher.start()
/// ```
///
/// Symbolic links are never followed: watching a link fails with
/// ``FolderWatcherError/Code/notADirectory`` (for a directory watch).
/// A watched path that disappears produces one ``Event/Kind/watchEnded``;
/// watch it again once it exists. After ``Event/Kind/overflow``, rescan.
///
/// One inotify instance is used per watcher; the kernel allows 128 per user by
/// default, so a process should keep few (a started `GroupStore` uses one).
///
public final class FolderWatcher: Sendable {
    /// Receives each batch of events, on the watcher's queue.
    public typealias Handler = @Sendable ([Event]) -> Void

    /// What a watch is on.
    public enum Target: Sendable {
        /// A directory: events about its entries, and its own end.
        case directory
        /// A single file (for example an SQLite `-wal` file).
        case file
    }

    private let core: WatchCore
    private let thread: WatchThread
    /// The serial queue the handler runs on.
    public let queue: DispatchQueue

    /// Creates a watcher. Nothing is delivered until ``start()``.
    ///
    /// - Parameters:
    ///   - queue: the serial queue the handler runs on; a new one by default.
    ///   - handler: receives each batch of events.
    public init(queue: DispatchQueue? = nil, handler: @escaping Handler) throws(FolderWatcherError) {
        let queue = queue ?? DispatchQueue(label: "FolderWatcher")
        let core = try WatchCore(handler: handler)
        // The thread owns the core until it ends; the descriptor closes
        // when the core goes away.
        thread = try WatchThread(core: core, queue: queue)
        self.core = core
        self.queue = queue
    }

    deinit {
        thread.cancel()
    }

    private let started = StartFlag()

    /// Starts delivering events. Calling it again does nothing.
    public func start() {
        if started.setOnce() { thread.start() }
    }

    /// Stops reading events for `interval`, then reads what accumulated in
    /// one go: meanwhile the kernel merges each repeated event (the same
    /// change to the same file) into one, so a busy file costs one handler
    /// call per interval instead of one per change. Does nothing if already
    /// paused, or before ``start()``.
    ///
    /// The kernel still queues (and merges) an event for every change made
    /// during the pause, and it does that work in the changing process's own
    /// system calls. For a file written many times a second by another
    /// process, pass it in `unwatching`: its watch is taken off for the
    /// pause and put back at its end, when the batch read then carries a
    /// ``Event/Kind/modified`` event for it (it may have changed unseen; real
    /// events may follow it), or ``Event/Kind/watchEnded`` if it can no
    /// longer be watched. ``watch(_:for:target:)`` of such a path during the
    /// pause puts it back at once, without that event; ``unwatch(_:)`` ends
    /// it for good.
    ///
    /// - Parameters:
    ///   - interval: seconds, at most an hour.
    ///   - unwatching: watched paths to take off for the pause.
    /// - Returns: whether this call started a pause.
    @discardableResult
    public func pause(for interval: Double, unwatching: [String] = []) -> Bool {
        guard started.value else { return false }
        return thread.pause(for: interval, unwatching: unwatching)
    }

    /// Stops delivering events; the descriptor closes once the watcher is
    /// released and its reading thread has ended (never waited for). Called
    /// on the watcher's queue, no handler call follows; called elsewhere, one
    /// already under way may finish. Idempotent.
    public func cancel() {
        thread.cancel()
    }

    /// Watches `path` for `mask`. Watching a path again replaces its mask.
    ///
    /// The watch also reports the path's own end (``Event/Kind/watchEnded``).
    public func watch(_ path: String, for mask: Mask, target: Target = .directory) throws(FolderWatcherError) {
        var bits = mask.rawValue | UInt32(IN_DELETE_SELF | IN_MOVE_SELF)
        if target == .directory { bits |= UInt32(IN_ONLYDIR) }
        try core.add(path: path, mask: bits)
    }

    /// Stops watching `path`. Events already read for it are still delivered;
    /// no ``Event/Kind/watchEnded`` follows.
    public func unwatch(_ path: String) {
        core.remove(path: path)
    }

    /// Whether `path` is watched now.
    public func isWatching(_ path: String) -> Bool {
        core.isWatching(path)
    }

    /// The paths watched now.
    public var watchedPaths: [String] { core.paths }
}
