import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file of an embedded remote as the file system shows it: which file
/// (device and inode, to notice a replaced remote) and whether it starts
/// like a SQLite database. Checked on open and before every call, so a
/// remote deleted, replaced or overwritten with garbage gives a clear
/// ``CloudSyncError/Code/badRemote`` instead of undefined behaviour.
struct EmbeddedRemoteFile: Hashable, Sendable {
    /// The first 16 bytes of every SQLite 3 database.
    static let sqliteMagic: [UInt8] = Array("SQLite format 3\0".utf8)

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

    /// The file at `path`, or `nil` when there is none. Throws when it is
    /// not a file SQLite could use as a database (a directory, unreadable,
    /// not starting with SQLite's header).
    static func probe(_ path: String, display: String) throws(CloudSyncError) -> EmbeddedRemoteFile? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            switch code {
            case ENOENT: return nil
            case EACCES, EPERM:
                throw CloudSyncError(.badRemote, "cannot read the remote \(display): permission denied")
            default:
                throw CloudSyncError(.badRemote, "cannot open the remote \(display): \(describe(code))")
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw CloudSyncError(.badRemote, "cannot inspect the remote \(display): \(describe(errno))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw CloudSyncError(.badRemote, "the remote \(display) is a directory, not a database file")
        default: throw CloudSyncError(.badRemote, "the remote \(display) is not a regular file")
        }
        let file = EmbeddedRemoteFile(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size))
        guard file.size > 0 else { return file }
        var header = [UInt8](repeating: 0, count: sqliteMagic.count)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else {
            throw CloudSyncError(.badRemote, "cannot read the remote \(display): \(describe(errno))")
        }
        guard count == header.count, header == sqliteMagic else {
            throw CloudSyncError(.badRemote, "the remote \(display) is not a SQLite database")
        }
        return file
    }

    /// Whether `path` (a file) can be read and written by this process.
    static func isReadWrite(_ path: String) -> Bool {
        access(path, R_OK | W_OK) == 0
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
