import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An error thrown by ``FolderWatcher``.
///
/// Match on ``code``:
///
/// ```swift
/// do { try watcher.watch("/srv/group/members") }
/// catch let error as FolderWatcherError where error.code == .pathNotFound { … }
/// ```
public struct FolderWatcherError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case inotifyUnavailable, pathNotFound, notADirectory, permissionDenied, watchLimitReached, readFailed, cancelled
            case other
        }
        fileprivate var value: Value

        /// `inotify_init1` failed (for example the per-user instance limit was reached).
        public static let inotifyUnavailable = Code(value: .inotifyUnavailable)
        /// The path does not exist.
        public static let pathNotFound = Code(value: .pathNotFound)
        /// The path is not a directory, or is a symbolic link (links are never followed).
        public static let notADirectory = Code(value: .notADirectory)
        /// The process may not read the path.
        public static let permissionDenied = Code(value: .permissionDenied)
        /// The per-user watch limit (`max_user_watches`) was reached.
        public static let watchLimitReached = Code(value: .watchLimitReached)
        /// Reading the inotify descriptor failed.
        public static let readFailed = Code(value: .readFailed)
        /// The watcher was cancelled.
        public static let cancelled = Code(value: .cancelled)
        /// Any other system error; see ``FolderWatcherError/errno``.
        public static let other = Code(value: .other)

        /// The description, for `localizedDescription` and logs.
        public var errorDescription: String? { description }

        public var description: String { "\(value)" }
    }

    /// What went wrong.
    public var code: Code
    /// The path involved, if any.
    public var path: String?
    /// The system error number, or 0.
    public var errno: Int32

    public init(code: Code, path: String?, errno: Int32 = 0) {
        self.code = code
        self.path = path
        self.errno = errno
    }

    /// Maps a failed `inotify_add_watch` to an error.
    static func addWatch(path: String, errno: Int32) -> FolderWatcherError {
        let code: Code
        switch errno {
        case ENOENT: code = .pathNotFound
        case ENOTDIR, ELOOP: code = .notADirectory
        case EACCES, EPERM: code = .permissionDenied
        case ENOSPC: code = .watchLimitReached
        default: code = .other
        }
        return FolderWatcherError(code: code, path: path, errno: errno)
    }

    public var description: String {
        var text: String
        switch code {
        case .inotifyUnavailable: text = "cannot create an inotify instance"
        case .pathNotFound: text = "cannot watch \(path ?? "?"): no such directory"
        case .notADirectory: text = "cannot watch \(path ?? "?"): not a directory (symbolic links are not followed)"
        case .permissionDenied: text = "cannot watch \(path ?? "?"): permission denied"
        case .watchLimitReached: text = "cannot watch \(path ?? "?"): inotify watch limit reached (fs.inotify.max_user_watches)"
        case .readFailed: text = "reading inotify events failed"
        case .cancelled: text = "the folder watcher was cancelled"
        default: text = "cannot watch \(path ?? "?")"
        }
        if errno != 0 { text += " (\(String(cString: strerror(errno))))" }
        return text
    }
}
