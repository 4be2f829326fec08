import Dispatch
import FolderWatching
import Logging

/// Push hints for an embedded remote: an inotify watch on the directory that
/// holds the remote's file, which yields whenever a client announces a
/// committed write (it touches the times of the `-wal`, or of the file:
/// `IN_ATTRIB`), by any process (this one included), and when the file is
/// created, moved in or rewritten in place (a remote replaced or restored).
///
/// The writes to the `-wal` themselves are not hints: they come before the
/// commit is visible (and, on a disk, before its sync), so a fetch they woke
/// could miss the commit and nothing would wake it again. Readers announce
/// nothing, so fetching after a hint causes no further hint (but a root
/// process that opens the file hands the `-wal` to its owner: one spare
/// hint).
enum RemotePushWatcher {
    /// A stream that yields (coalesced: at most one pending element) when the
    /// remote at `path` (absolute) may have changed. The watch is cancelled
    /// when the stream terminates. If the directory cannot be watched the
    /// stream stays open and silent (hints are only hints; the failure is
    /// logged).
    static func hints(for path: String, display: String, logger: Logger) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (directory, name) = EmbeddedRemoteFile.split(path)
        let wal = name + "-wal"
        let watcher: FolderWatcher
        do {
            watcher = try FolderWatcher(queue: DispatchQueue(label: "EmbeddedRemote.pushHints")) { events in
                for event in events {
                    switch event.kind {
                    case .overflow:
                        // Events were lost: something may have changed.
                        continuation.yield()
                        return
                    case .watchEnded:
                        logger.info("push hints stop: the directory \(directory) of the remote \(display) is gone")
                        return
                    case .attributesChanged:
                        if event.name == name || event.name == wal {
                            continuation.yield()
                            return
                        }
                    default:
                        if event.name == name {
                            continuation.yield()
                            return
                        }
                    }
                }
            }
            try watcher.watch(directory, for: [.attributesChanged, .closedAfterWrite, .created, .movedIn])
        } catch {
            logger.info("no push hints for the remote \(display): cannot watch \(directory): \(error)")
            return stream
        }
        continuation.onTermination = { _ in watcher.cancel() }
        watcher.start()
        return stream
    }
}
