#if canImport(Glibc)
    import Glibc
#endif

/// Owns one inotify file descriptor and closes it when it goes away.
///
/// Non-copyable, so exactly one owner can close the descriptor. The raw
/// system calls are wrapped here and nowhere else; each retries on `EINTR`
/// and reports failure through ``FolderWatcherError``.
struct InotifyDescriptor: ~Copyable {
    let rawValue: CInt

    /// Creates a non-blocking, close-on-exec inotify instance.
    init() throws(FolderWatcherError) {
        let fd = inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            throw FolderWatcherError(code: .inotifyUnavailable, path: nil, errno: errno)
        }
        rawValue = fd
    }

    deinit {
        _ = close(rawValue)
    }

    /// Adds (or updates) a watch on `path`; never follows a symbolic link.
    func addWatch(path: String, mask: UInt32) throws(FolderWatcherError) -> CInt {
        while true {
            let wd = inotify_add_watch(rawValue, path, mask | UInt32(IN_DONT_FOLLOW))
            if wd >= 0 { return wd }
            if errno == EINTR { continue }
            throw FolderWatcherError.addWatch(path: path, errno: errno)
        }
    }

    /// Removes a watch; a watch the kernel already dropped is not an error.
    func removeWatch(_ wd: CInt) {
        _ = inotify_rm_watch(rawValue, wd)
    }

    /// Reads what is queued into `buffer`.
    ///
    /// - Returns: the number of bytes read, or 0 when nothing is queued.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(FolderWatcherError) -> Int {
        while true {
            let count = Glibc.read(rawValue, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            switch errno {
            case EINTR: continue
            case EAGAIN: return 0
            default: throw FolderWatcherError(code: .readFailed, path: nil, errno: errno)
            }
        }
    }
}
