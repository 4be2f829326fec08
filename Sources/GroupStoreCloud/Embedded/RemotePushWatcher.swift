import Dispatch
import FolderWatching
import Logging

/// Push hints for an embedded remote: an inotify watch on the directory that
/// holds the remote's file, which yields whenever the file or its `-wal` is
/// written, by any process (this one included).
///
/// Readers do not write the file or its `-wal`, so fetching after a hint
/// does not cause another hint.
enum RemotePushWatcher {
    /// A stream that yields (coalesced: at most one pending element) when the
    /// remote at `path` (absolute) may have changed. The watch is cancelled
    /// when the stream terminates. If the directory cannot be watched the
    /// stream stays open and silent (hints are only hints; the failure is
    /// logged).
    static func hints(for path: String, display: String, logger: Logger) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (directory, name) = EmbeddedRemoteFile.split(path)
        let names: Set<String> = [name, name + "-wal"]
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
                    default:
                        if let entry = event.name, names.contains(entry) {
                            continuation.yield()
                            return
                        }
                    }
                }
            }
            try watcher.watch(directory, for: [.modified, .closedAfterWrite, .created, .movedIn])
        } catch {
            logger.info("no push hints for the remote \(display): cannot watch \(directory): \(error)")
            return stream
        }
        continuation.onTermination = { _ in watcher.cancel() }
        watcher.start()
        return stream
    }
}
