import Foundation
import GroupStoreCloud
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file of an embedded remote as the file system shows it: which file
/// (device and inode, to notice a replaced remote) and whether it starts
/// a regular file. Checked on open and before every call, so a remote
/// deleted or replaced is noticed (and reopened, where SQLite tells whether
/// it is a database) instead of written to blindly.
struct EmbeddedRemoteFile: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    /// Zero for a file just created, before SQLite wrote its first page.
    var size: Int64

    /// Whether both name the same file (the size may differ).
    func isSameFile(as other: EmbeddedRemoteFile) -> Bool {
        device == other.device && inode == other.inode
    }

    /// The directory that holds `path`, and the file's name in it.
    static func split(_ path: String) -> (directory: String, name: String) {
        let url = URL(fileURLWithPath: path)
        return (url.deletingLastPathComponent().path, url.lastPathComponent)
    }

    /// `path` made absolute against the current directory.
    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// Checks the directory that must hold the remote: it exists and is a directory.
    static func checkDirectory(of path: String, display: String) throws(CloudSyncError) {
        let directory = split(path).directory
        var info = stat()
        guard stat(directory, &info) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR {
                throw CloudSyncError(.badRemote, "no directory \(directory) for the remote \(display)")
            }
            throw CloudSyncError(.badRemote, "cannot reach the directory \(directory) of the remote \(display): \(describe(code))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw CloudSyncError(.badRemote, "\(directory) is not a directory, so it cannot hold the remote \(display)")
        }
    }

    /// The first 16 bytes of every SQLite 3 database.
    static let sqliteMagic: [UInt8] = Array("SQLite format 3\0".utf8)

    /// Descriptors kept open, one per file (device and inode) ever checked,
    /// to read headers with. They are never closed: closing any descriptor
    /// of a file drops every POSIX lock the process holds on it, SQLite's
    /// included, and another process could then checkpoint and delete the
    /// `-wal` this process still writes into — losing those writes. One
    /// descriptor per remote file (and per replacement of it) is the cost.
    private static let headerDescriptors = Mutex<[String: CInt]>([:])

    /// The file at `path`, or `nil` when there is none. Throws when it is
    /// not a regular file, or does not start like a SQLite database (read
    /// through a descriptor that stays open, see ``headerDescriptors``).
    static func probe(_ path: String, display: String) throws(CloudSyncError) -> EmbeddedRemoteFile? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            switch code {
            case ENOENT: return nil
            case EACCES, EPERM:
                throw CloudSyncError(.badRemote, "cannot read the remote \(display): permission denied")
            default:
                throw CloudSyncError(.badRemote, "cannot inspect the remote \(display): \(describe(code))")
            }
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw CloudSyncError(.badRemote, "the remote \(display) is a directory, not a database file")
        default: throw CloudSyncError(.badRemote, "the remote \(display) is not a regular file")
        }
        let file = EmbeddedRemoteFile(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size))
        guard file.size > 0 else { return file }
        let header = try readHeader(path, file: file, display: display)
        guard header == sqliteMagic else {
            throw CloudSyncError(.badRemote, "the remote \(display) is not a SQLite database")
        }
        return file
    }

    private static func readHeader(_ path: String, file: EmbeddedRemoteFile, display: String) throws(CloudSyncError) -> [UInt8] {
        let key = "\(file.device):\(file.inode)"
        let fd: CInt = try headerDescriptors.withLock { descriptors throws(CloudSyncError) -> CInt in
            if let fd = descriptors[key] { return fd }
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw CloudSyncError(.badRemote, "cannot read the remote \(display): \(describe(errno))")
            }
            var opened = stat()
            // Replaced between the stat and the open: keep it under its own identity, read it next time.
            let actual = fstat(fd, &opened) == 0 ? "\(opened.st_dev):\(opened.st_ino)" : key
            descriptors[actual] = fd
            return fd
        }
        var header = [UInt8](repeating: 0, count: sqliteMagic.count)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else {
            throw CloudSyncError(.badRemote, "cannot read the remote \(display): \(describe(errno))")
        }
        return count == header.count ? header : []
    }

    /// Whether `path` (a file) can be read and written by this process.
    static func isReadWrite(_ path: String) -> Bool {
        access(path, R_OK | W_OK) == 0
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
