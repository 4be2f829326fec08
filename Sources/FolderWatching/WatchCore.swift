import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The state behind a ``FolderWatcher``: the descriptor, the table of watches
/// and the read buffer.
///
/// Kept apart from the watcher so the reading thread can keep it (and so the
/// descriptor) alive until it ends, without a reference cycle.
///
/// `@unchecked Sendable`: the watch table lives in a `Mutex`, held across the
/// inotify calls that add and remove watches (so the table and the kernel
/// agree); the one call outside it, the reading thread's removal of a watch
/// whose inode moved away, leaves the table to the `IN_IGNORED` event that
/// follows (it reports the watch's end to the owner, and an `add` of the
/// path meanwhile gets a descriptor of its own); `buffer` is only
/// touched by `drain()`, which the watcher's one reading thread calls; the
/// descriptor is immutable and inotify calls on it are thread-safe.
final class WatchCore: @unchecked Sendable {
    struct Watches {
        /// One watch: its descriptor, and its mask (to put it back after a pause).
        struct Watch {
            var descriptor: CInt
            var mask: UInt32
        }

        var pathByDescriptor: [CInt: String] = [:]
        var watchByPath: [String: Watch] = [:]
        /// Watches taken off for a pause, with their masks (see ``suspend(paths:)``).
        var suspended: [String: UInt32] = [:]
    }

    let descriptor: InotifyDescriptor
    let handler: FolderWatcher.Handler
    let watches = Mutex(Watches())
    private var buffer: UnsafeMutableRawBufferPointer
    /// At most this many bytes are read before the handler is called, so one
    /// storm cannot hold the queue forever.
    private let maximumBatchBytes = 1 << 20
    /// The largest event the kernel queues: a header and a name of up to
    /// `NAME_MAX` bytes with its terminating zero.
    private static let largestEvent = MemoryLayout<inotify_event>.size + Int(NAME_MAX) + 1

    init(handler: @escaping FolderWatcher.Handler) throws(FolderWatcherError) {
        descriptor = try InotifyDescriptor()
        self.handler = handler
        buffer = .allocate(byteCount: 64 * 1024, alignment: MemoryLayout<inotify_event>.alignment)
    }

    deinit {
        buffer.deallocate()
    }

    func add(path: String, mask: UInt32) throws(FolderWatcherError) {
        // Under the lock, as every change of watches: the table never
        // holds a descriptor the kernel has removed.
        try watches.withLock { (table) throws(FolderWatcherError) in
            let wd = try descriptor.addWatch(path: path, mask: mask)
            Self.record(wd: wd, path: path, mask: mask, in: &table)
        }
    }

    private static func record(wd: CInt, path: String, mask: UInt32, in table: inout Watches) {
        if let old = table.pathByDescriptor[wd], old != path {
            // The same inode under another name (a hard link or a rename):
            // the kernel reuses the descriptor; keep the newest name.
            table.watchByPath[old] = nil
        }
        table.pathByDescriptor[wd] = path
        table.watchByPath[path] = Watches.Watch(descriptor: wd, mask: mask)
        // Watched anew: a suspension of it ends here.
        table.suspended[path] = nil
    }

    func remove(path: String) {
        watches.withLock { table in
            table.suspended[path] = nil
            _ = takeOff(path, in: &table)
        }
    }

    /// Removes the watch of `path` from the table and the kernel (its
    /// `IN_IGNORED` event then names a descriptor no longer in the table:
    /// dropped). Returns it, if there was one.
    private func takeOff(_ path: String, in table: inout Watches) -> Watches.Watch? {
        guard let watch = table.watchByPath.removeValue(forKey: path) else { return nil }
        table.pathByDescriptor[watch.descriptor] = nil
        descriptor.removeWatch(watch.descriptor)
        return watch
    }

    func isWatching(_ path: String) -> Bool {
        watches.withLock { $0.watchByPath[path] != nil || $0.suspended[path] != nil }
    }

    var paths: [String] {
        watches.withLock { Array(Set($0.watchByPath.keys).union($0.suspended.keys)) }
    }

    /// Takes the watches of `paths` off (the kernel queues nothing for them),
    /// keeping their masks for ``resumeSuspended()``. Paths not watched are
    /// skipped.
    func suspend(paths: [String]) {
        watches.withLock { table in
            for path in paths {
                if let watch = takeOff(path, in: &table) { table.suspended[path] = watch.mask }
            }
        }
    }

    /// Puts the suspended watches back. Each path gets one ``FolderWatcher/Event/Kind/modified``
    /// event (it may have changed meanwhile, unseen), or ``FolderWatcher/Event/Kind/watchEnded``
    /// if it cannot be watched any more.
    func resumeSuspended() -> [FolderWatcher.Event] {
        watches.withLock { table in
            var events: [FolderWatcher.Event] = []
            for (path, mask) in table.suspended.sorted(by: { $0.key < $1.key }) {
                do {
                    let wd = try descriptor.addWatch(path: path, mask: mask)
                    Self.record(wd: wd, path: path, mask: mask, in: &table)
                    events.append(FolderWatcher.Event(kind: .modified, path: path))
                } catch {
                    events.append(FolderWatcher.Event(kind: .watchEnded, path: path))
                }
            }
            table.suspended = [:]
            return events
        }
    }

    /// Whether watches are suspended.
    var hasSuspended: Bool {
        watches.withLock { !$0.suspended.isEmpty }
    }

    /// Reads everything queued (up to a bound). Called by the watcher's
    /// reading thread only.
    func drain() -> [FolderWatcher.Event] {
        var events: [FolderWatcher.Event] = []
        var total = 0
        while total < maximumBatchBytes {
            let count: Int
            do {
                count = try descriptor.read(into: buffer)
            } catch {
                // A read error other than EAGAIN leaves the queue in an unknown
                // state: tell the consumer to rescan.
                events.append(FolderWatcher.Event(kind: .overflow, path: ""))
                break
            }
            if count == 0 { break }
            total += count
            parse(count: count, into: &events)
            // Room was left for the largest event: the queue was empty (a
            // read more would only say so). Later events wake `poll` again.
            if count < buffer.count - Self.largestEvent { break }
        }
        return events
    }

    private func parse(count: Int, into events: inout [FolderWatcher.Event]) {
        let header = MemoryLayout<inotify_event>.size
        var offset = 0
        while offset + header <= count {
            let wd = buffer.loadUnaligned(fromByteOffset: offset, as: CInt.self)
            let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            var name: String?
            if length > 0 {
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[(offset + header)..<(offset + header + length)])
                let end = bytes.firstIndex(of: 0) ?? bytes.count
                name = String(decoding: bytes[..<end], as: UTF8.self)
            }
            offset += header + length
            handle(wd: wd, mask: mask, name: name, into: &events)
        }
    }

    private func handle(wd: CInt, mask: UInt32, name: String?, into events: inout [FolderWatcher.Event]) {
        guard let kind = FolderWatcher.Event.kind(for: mask) else {
            if mask & UInt32(IN_MOVE_SELF) != 0 {
                // The watched path now names something else (or nothing): stop
                // watching the moved inode; IN_IGNORED reports the end.
                descriptor.removeWatch(wd)
            }
            return
        }
        if kind == .overflow {
            events.append(FolderWatcher.Event(kind: .overflow, path: ""))
            return
        }
        let path: String? = watches.withLock { table in
            guard let path = table.pathByDescriptor[wd] else { return nil }
            if kind == .watchEnded {
                table.pathByDescriptor[wd] = nil
                if table.watchByPath[path]?.descriptor == wd { table.watchByPath[path] = nil }
            }
            return path
        }
        // Events of a watch removed with `unwatch` are dropped.
        guard let path else { return }
        let isDirectory = mask & UInt32(IN_ISDIR) != 0
        events.append(FolderWatcher.Event(kind: kind, path: path, name: kind == .watchEnded ? nil : name, isDirectory: isDirectory))
    }
}
