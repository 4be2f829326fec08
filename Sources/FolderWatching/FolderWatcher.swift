import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Watches directories (and single files) with one inotify instance and
/// reports what changed in batches.
///
/// The descriptor is non-blocking and read by a dispatch read source on the
/// watcher's serial queue, so nothing ever blocks the Swift concurrency pool.
/// The handler runs on that queue with every event read in one go (coalesced),
/// and reading pauses while it runs, so a slow handler leads to
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
/// default, so a process should keep one.
///
/// `@unchecked Sendable`: the only non-`Sendable` property, the dispatch
/// source, is configured in `init` and afterwards only `activate()`d (once,
/// guarded by an atomic flag), `cancel()`led, and `suspend()`ed then
/// `resume()`d in balanced pairs (one pause at a time, guarded by another
/// atomic flag); all are thread-safe.
public final class FolderWatcher: @unchecked Sendable {
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
    private let source: any DispatchSourceRead
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
        let source = DispatchSource.makeReadSource(fileDescriptor: core.descriptor.rawValue, queue: queue)
        source.setEventHandler { [weak core] in core?.drain() }
        // The cancel handler owns the core until the source is done with the
        // descriptor; the descriptor closes when the core goes away.
        source.setCancelHandler { _ = core }
        self.core = core
        self.source = source
        self.queue = queue
    }

    deinit {
        source.cancel()
        // A source must be resumed once before it can finish cancelling.
        if !started.value { source.activate() }
    }

    private let started = StartFlag()

    /// Starts (or resumes) delivering events. Calling it again does nothing.
    public func start() {
        if started.setOnce() { source.activate() }
    }

    /// Whether reading is paused (see ``pause(for:)``).
    private let paused = Atomic<Bool>(false)

    /// Stops reading events for `interval`, then reads what accumulated in
    /// one go: meanwhile the kernel merges each repeated event (the same
    /// change to the same file) into one, so a busy file costs one handler
    /// call per interval instead of one per change. Does nothing if already
    /// paused, or before ``start()``.
    public func pause(for interval: Double) {
        guard started.value, paused.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        source.suspend()
        queue.asyncAfter(deadline: .now() + interval) { [self] in
            paused.store(false, ordering: .releasing)
            source.resume()
        }
    }

    /// Stops delivering events and releases the descriptor. Idempotent.
    public func cancel() {
        source.cancel()
        if started.setOnce() { source.activate() }
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
