import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The group directory on disk:
///
/// ```
/// <group>/
///   store.sqlite (+ -wal, -shm)   the shared database
///   members/<member>/             lock, cursor, and the member's payload files
///   tmp/                          staging for atomic publishing (not watched)
/// ```
///
/// Holds descriptors of the directories it manages; everything below the
/// group directory is opened relative to them without following links.
final class GroupDirectory: Sendable {
    static let databaseFileName = "store.sqlite"
    static let membersFolderName = "members"
    static let stagingFolderName = "tmp"

    let root: DirectoryHandle
    let members: DirectoryHandle
    let staging: DirectoryHandle

    var path: String { root.path }
    var databasePath: String { root.path + "/" + Self.databaseFileName }
    var walPath: String { databasePath + "-wal" }
    var membersPath: String { members.path }

    /// Opens the group directory at `path`, creating it (and its parents) when
    /// `create` is true.
    init(path requested: String, create: Bool) throws(GroupStoreError) {
        let given = Self.normalized(requested)
        if create {
            // Not NSString.deletingLastPathComponent: Foundation on Linux traps
            // (SIGILL) on a path of one relative component such as "g".
            let parent = Self.parent(of: given)
            if !FileManager.default.fileExists(atPath: parent) {
                do {
                    try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
                } catch {
                    throw GroupStoreError(.fileSystem, "cannot create directory \(parent): \(error.localizedDescription)", path: parent)
                }
            }
            if mkdir(given, DirectoryHandle.directoryMode) == 0 {
                // mkdir applies the umask; the group guarantee needs the exact mode.
                guard chmod(given, DirectoryHandle.directoryMode) == 0 else {
                    throw GroupStoreError.system("cannot set the mode of group directory", path: given, errno: errno)
                }
            } else if errno != EEXIST {
                throw GroupStoreError.system("cannot create group directory", path: given, errno: errno)
            }
        }
        // A group directory reached through a symbolic link is resolved once,
        // here: every part of the store (the database, inotify, payloads) then
        // uses the real directory, and nothing below it is followed.
        let path = Self.resolvingLinks(given)
        root = try DirectoryHandle(path: path)
        if create {
            try root.makeDirectory(Self.membersFolderName)
            try root.makeDirectory(Self.stagingFolderName)
        } else if try root.status(of: Self.membersFolderName) == nil {
            throw GroupStoreError(.groupNotFound, "\(path) is not a group directory (no members/ folder)", path: path)
        }
        members = try DirectoryHandle(name: Self.membersFolderName, in: root)
        if !create { try root.makeDirectory(Self.stagingFolderName) }
        staging = try DirectoryHandle(name: Self.stagingFolderName, in: root)
    }

    /// Makes sure `store.sqlite` is a regular file (not a link), creating it
    /// with mode 0660 so SQLite's `-wal` and `-shm` files get the same mode.
    func prepareDatabaseFile() throws(GroupStoreError) {
        if let info = try root.status(of: Self.databaseFileName) {
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                throw GroupStoreError(.unsafePath, "\(databasePath) is not a regular file (symbolic links are refused)", path: databasePath)
            }
            return
        }
        do {
            let fd = try root.openFile(Self.databaseFileName, flags: O_RDWR | O_CREAT | O_EXCL)
            close(fd)
        } catch  where error.errno == EEXIST {
            // Another member created it first.
        }
    }

    /// Refuses a group this process cannot write: the directory, its
    /// `members/` and `tmp/` folders, this member's folder, and the database
    /// with its `-wal` and `-shm` files when they exist. (SQLite would open a
    /// read-only database without a word, and the first write would fail.)
    func checkWritable(by member: MemberName, folder: DirectoryHandle) throws(GroupStoreError) {
        let checks: [(DirectoryHandle, String, String)] = [
            (root, ".", path), (members, ".", members.path), (staging, ".", staging.path), (folder, ".", folder.path),
            (root, Self.databaseFileName, databasePath), (root, Self.databaseFileName + "-wal", walPath),
            (root, Self.databaseFileName + "-shm", databasePath + "-shm"),
        ]
        for (directory, name, path) in checks {
            if faccessat(directory.fd, name, W_OK, AT_EACCESS) != 0 {
                let error = errno
                if error == ENOENT { continue }
                throw GroupStoreError(
                    error == EROFS || error == EACCES || error == EPERM ? .permissionDenied : .fileSystem,
                    "member '\(member)' cannot write \(path): \(String(cString: strerror(error))) (every member writes the group's database and its own folder)",
                    path: path, errno: error)
            }
        }
    }

    /// Runs `body` holding an exclusive `flock` on the group directory, so
    /// processes opening the group at the same time set the database up one
    /// after another (switching a new database to WAL fails with `SQLITE_BUSY`
    /// without calling the busy handler, and migrations are best run once).
    func withSetupLock<T>(_ body: () throws -> T) throws -> T {
        guard retryingEINTR({ flock(root.fd, LOCK_EX) }) == 0 else {
            throw GroupStoreError.system("cannot lock", path: path, errno: errno)
        }
        defer { _ = flock(root.fd, LOCK_UN) }
        return try body()
    }

    /// Whether the group's path still names the directory this process opened.
    func rootIsInPlace() -> Bool {
        var opened = stat()
        var current = stat()
        guard fstat(root.fd, &opened) == 0, stat(path, &current) == 0 else { return false }
        return opened.st_ino == current.st_ino && opened.st_dev == current.st_dev && opened.st_nlink > 0
    }

    /// The inode of `store.sqlite` now, or `nil` if it is missing.
    func databaseInode() -> UInt64? {
        (try? root.status(of: Self.databaseFileName)).flatMap { $0 }.map { UInt64($0.st_ino) }
    }

    /// The folder of `member`, created when missing.
    func memberFolder(_ member: MemberName, create: Bool) throws(GroupStoreError) -> DirectoryHandle {
        if create { try members.makeDirectory(member.rawValue) }
        return try DirectoryHandle(name: member.rawValue, in: members)
    }

    /// The members that have a folder (real directories with valid names only).
    func memberNames() throws(GroupStoreError) -> [MemberName] {
        var names: [MemberName] = []
        for entry in try members.entries() {
            guard let name = try? MemberName(entry),
                let info = try? members.status(of: entry),
                (info.st_mode & S_IFMT) == S_IFDIR
            else { continue }
            names.append(name)
        }
        return names.sorted()
    }

    /// `path` with symbolic links resolved (`realpath`), or as it is if it
    /// cannot be resolved (it does not exist: opening it says so).
    static func resolvingLinks(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` made absolute (a relative path is taken from the current
    /// directory, now), without `.` segments, repeated or trailing slashes, so
    /// paths compare and print consistently and do not depend on a later
    /// change of directory. `..` is kept: the kernel resolves it, through
    /// symbolic links if any. A relative path stays relative only if the
    /// current directory cannot be known.
    static func normalized(_ path: String) -> String {
        guard !path.isEmpty else { return path }  // not the current directory: fails to open
        var full = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard getcwd(&buffer, buffer.count) != nil else { return lexicallyNormalized(path, absolute: false) }
            full = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/" + path
        }
        return lexicallyNormalized(full, absolute: true)
    }

    private static func lexicallyNormalized(_ path: String, absolute: Bool) -> String {
        let segments = path.split(separator: "/").filter { $0 != "." }
        if absolute { return "/" + segments.joined(separator: "/") }
        return segments.isEmpty ? "." : segments.joined(separator: "/")
    }

    /// The directory holding `path` (a normalised path).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
