import Dispatch
import FolderWatching
import Logging

/// Push hints for an embedded remote: an inotify watch on the directory that
/// holds the remote's file, which calls `hint` whenever a client announces a
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
    /// Starts the watch of the remote at `path` (absolute); the caller
    /// cancels the watcher returned. `nil` if the directory cannot be
    /// watched (hints are only hints; the failure is logged).
    static func start(for path: String, display: String, logger: Logger, hint: @escaping @Sendable () -> Void) -> FolderWatcher? {
        let (directory, name) = EmbeddedRemoteFile.split(path)
        let wal = name + "-wal"
        let watcher: FolderWatcher
        do {
            watcher = try FolderWatcher(queue: DispatchQueue(label: "EmbeddedRemote.pushHints")) { events in
                for event in events {
                    switch event.kind {
                    case .overflow:
                        // Events were lost: something may have changed.
                        hint()
                        return
                    case .watchEnded:
                        logger.info("push hints stop: the directory \(directory) of the remote \(display) is gone")
                        return
                    case .attributesChanged:
                        if event.name == name || event.name == wal {
                            hint()
                            return
                        }
                    default:
                        if event.name == name {
                            hint()
                            return
                        }
                    }
                }
            }
            try watcher.watch(directory, for: [.attributesChanged, .closedAfterWrite, .created, .movedIn])
        } catch {
            logger.info("no push hints for the remote \(display): cannot watch \(directory): \(error)")
            return nil
        }
        watcher.start()
        return watcher
    }
}
