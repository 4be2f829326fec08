import CEventFD
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The thread that reads a ``FolderWatcher``'s inotify descriptor.
///
/// It blocks in `poll(2)` on the descriptor and on an `eventfd` that
/// ``cancel()`` signals, drains what is queued, and runs the handler on the
/// watcher's queue with `DispatchQueue.sync`, which on an idle serial queue
/// runs the block on the calling thread. So an event costs one thread
/// wake-up, where a dispatch read source costs two (its manager thread's,
/// then a worker's). While the handler runs nothing is read, so a slow
/// handler leads to an overflow rather than unbounded memory.
final class WatchThread: Sendable {
    private let core: WatchCore
    private let queue: DispatchQueue
    private let wakeDescriptor: CInt
    private let cancelled = Atomic<Bool>(false)
    /// Reading is paused until this `CLOCK_MONOTONIC` time, in nanoseconds.
    private let pausedUntil = Atomic<UInt64>(0)

    init(core: WatchCore, queue: DispatchQueue) throws(FolderWatcherError) {
        // Fails for the reasons inotify_init1 fails (descriptor or memory limits).
        let descriptor = gs_eventfd()
        guard descriptor >= 0 else { throw FolderWatcherError(code: .inotifyUnavailable, path: nil, errno: errno) }
        self.core = core
        self.queue = queue
        wakeDescriptor = descriptor
    }

    deinit {
        _ = close(wakeDescriptor)
    }

    /// Starts the thread; it keeps this object (and so the descriptors)
    /// alive until it ends. If the system refuses a thread, the loop runs on
    /// a dispatch queue of its own instead (blocking one of its threads).
    func start() {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { argument in
                let watch = Unmanaged<WatchThread>.fromOpaque(argument!).takeRetainedValue()
                watch.run()
                return nil
            }, box.toOpaque())
        guard status == 0 else {
            box.release()
            DispatchQueue(label: "FolderWatcher.reader").async { self.run() }
            return
        }
        pthread_detach(thread)
    }

    /// Ends the thread without waiting for it. A batch read but not yet
    /// handed over is dropped; called on the queue, no handler call follows.
    func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Stops reading for `interval` seconds (at most an hour), with the
    /// watches of `unwatching` taken off meanwhile. Does nothing if already
    /// paused.
    /// - Returns: whether this call started a pause.
    func pause(for interval: Double, unwatching paths: [String]) -> Bool {
        let now = Self.now()
        let current = pausedUntil.load(ordering: .acquiring)
        guard current <= now else { return false }
        let nanoseconds = interval.isNaN ? 0 : UInt64(min(max(0, interval), 3600) * 1e9)
        guard pausedUntil.compareExchange(expected: current, desired: now + nanoseconds, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        // After the pause is set, so this thread (which puts them back once
        // it sees the pause over) does not find them off and put them back
        // at once. From another thread, a caller held up past the pause's
        // end takes them off after this thread saw it over; the removal's
        // IN_IGNORED event then wakes this thread's poll, which puts them
        // back.
        if !paths.isEmpty { core.suspend(paths: paths) }
        return true
    }

    private func run() {
        // Signals go to the process's other threads, as with dispatch's own.
        var signals = sigset_t()
        sigfillset(&signals)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        var descriptors = [
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: core.descriptor.rawValue, events: Int16(POLLIN), revents: 0),
        ]
        let unusable = Int16(POLLNVAL | POLLERR)
        while !cancelled.load(ordering: .acquiring) {
            let resumeAt = pausedUntil.load(ordering: .acquiring)
            let now = Self.now()
            if resumeAt > now {
                // Paused: wait for the end of the pause (in whole
                // milliseconds, rounded up), or a cancel.
                descriptors[0].revents = 0
                _ = poll(&descriptors, 1, CInt((resumeAt - now + 999_999) / 1_000_000))
                if descriptors[0].revents & unusable != 0 { return endUnusable() }
                continue
            }
            if core.hasSuspended {
                // The pause is over: watches taken off for it go back on
                // before anything is read, with an event each for what
                // they may have missed.
                deliver(core.resumeSuspended() + core.drain())
                continue
            }
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                // Only for a lack of kernel memory (the descriptors are
                // valid): events may be lost, so the consumer rescans; try
                // again after a moment.
                deliver([FolderWatcher.Event(kind: .overflow, path: "")])
                _ = poll(&descriptors, 1, 10)
                continue
            }
            if (descriptors[0].revents | descriptors[1].revents) & unusable != 0 { return endUnusable() }
            // A pause asked for while this thread waited holds the events
            // back too.
            if pausedUntil.load(ordering: .acquiring) > Self.now() { continue }
            if descriptors[1].revents != 0 { deliver(core.drain()) }
        }
    }

    /// A descriptor was closed behind this object's back (by foreign code):
    /// events may be lost and no more can be read, so the consumer is told
    /// once, as for an overflow, and the thread ends.
    private func endUnusable() {
        deliver([FolderWatcher.Event(kind: .overflow, path: "")])
    }

    private func deliver(_ events: [FolderWatcher.Event]) {
        guard !events.isEmpty else { return }
        queue.sync {
            guard !cancelled.load(ordering: .acquiring) else { return }
            core.handler(events)
        }
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
