#if canImport(Glibc)
    import Glibc
#endif

/// An open directory. Everything below it is reached relative to its
/// descriptor with `O_NOFOLLOW`, so a symbolic link planted under the group
/// directory is refused instead of followed. Closes its descriptor on deinit.
final class DirectoryHandle: Sendable {
    /// Mode of directories the store creates: owner and group, setgid so files
    /// inherit the directory's Unix group.
    static let directoryMode: mode_t = 0o2770
    /// Mode of files the store creates: owner and group read/write.
    static let fileMode: mode_t = 0o660

    let fd: CInt
    /// The path, for messages and for APIs that need one (inotify, SQLite).
    let path: String

    /// Opens `path` itself (a symbolic link at `path` is accepted: it is the
    /// caller's choice of group directory; nothing below it is followed).
    init(path: String) throws(GroupStoreError) {
        let fd = retryingEINTR { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else {
            let error = errno
            if error == ENOENT { throw GroupStoreError(.groupNotFound, "group directory \(path) does not exist", path: path, errno: error) }
            throw GroupStoreError.system("cannot open directory", path: path, errno: error)
        }
        self.fd = fd
        self.path = path
    }

    /// Opens the directory `name` inside `parent`, refusing a symbolic link.
    init(name: String, in parent: DirectoryHandle) throws(GroupStoreError) {
        let path = parent.path + "/" + name
        let fd = retryingEINTR { openat(parent.fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { throw GroupStoreError.system("cannot open directory", path: path, errno: errno) }
        self.fd = fd
        self.path = path
    }

    deinit { _ = close(fd) }

    /// Creates directory `name` (owner+group only) unless it exists.
    /// - Returns: whether it was created.
    @discardableResult
    func makeDirectory(_ name: String) throws(GroupStoreError) -> Bool {
        if mkdirat(fd, name, Self.directoryMode) == 0 {
            // mkdir applies the umask; set the exact mode on what we made.
            let child = try DirectoryHandle(name: name, in: self)
            guard fchmod(child.fd, Self.directoryMode) == 0 else {
                throw GroupStoreError.system("cannot set the mode of directory", path: child.path, errno: errno)
            }
            return true
        }
        if errno == EEXIST { return false }
        throw GroupStoreError.system("cannot create directory", path: path + "/" + name, errno: errno)
    }

    /// Opens file `name` with `flags` (always `O_NOFOLLOW | O_CLOEXEC`).
    /// A file created here gets mode 0660 whatever the umask.
    func openFile(_ name: String, flags: CInt) throws(GroupStoreError) -> CInt {
        let fd = retryingEINTR { openat(self.fd, name, flags | O_NOFOLLOW | O_CLOEXEC, Self.fileMode) }
        guard fd >= 0 else { throw GroupStoreError.system("cannot open", path: path + "/" + name, errno: errno) }
        if flags & O_CREAT != 0 && fchmod(fd, Self.fileMode) != 0 {
            // Owner and group only, or not at all.
            let error = errno
            close(fd)
            throw GroupStoreError.system("cannot set the mode of", path: path + "/" + name, errno: error)
        }
        return fd
    }

    /// Renames `name` here to `newName` in `directory` (atomic on one file system).
    func rename(_ name: String, to newName: String, in directory: DirectoryHandle) throws(GroupStoreError) {
        guard renameat(fd, name, directory.fd, newName) == 0 else {
            throw GroupStoreError.system("cannot rename into", path: directory.path + "/" + newName, errno: errno)
        }
    }

    /// Removes file `name`; a file already gone is not an error.
    func removeFile(_ name: String) throws(GroupStoreError) {
        guard unlinkat(fd, name, 0) == 0 || errno == ENOENT else {
            throw GroupStoreError.system("cannot remove", path: path + "/" + name, errno: errno)
        }
    }

    /// Removes the empty directory `name`.
    func removeDirectory(_ name: String) throws(GroupStoreError) {
        guard unlinkat(fd, name, AT_REMOVEDIR) == 0 else {
            throw GroupStoreError.system("cannot remove directory", path: path + "/" + name, errno: errno)
        }
    }

    /// `lstat` of `name`: never follows a link. `nil` if it does not exist.
    func status(of name: String) throws(GroupStoreError) -> stat? {
        var info = stat()
        if fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return info }
        if errno == ENOENT { return nil }
        throw GroupStoreError.system("cannot inspect", path: path + "/" + name, errno: errno)
    }

    /// The names in this directory (without `.` and `..`).
    func entries() throws(GroupStoreError) -> [String] {
        var names: [String] = []
        try forEachEntry { names.append($0) }
        return names
    }

    /// Where `d_name` starts in a `dirent` record.
    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// Calls `body` with each name in this directory (without `.` and
    /// `..`) as it is read, holding none of them: for folders of any size.
    /// `body` may remove the entry it is given.
    func forEachEntry(_ body: (String) -> Void) throws(GroupStoreError) {
        // A fresh open file description, so listing never disturbs `fd`.
        let listFD = retryingEINTR { openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard listFD >= 0 else { throw GroupStoreError.system("cannot list", path: path, errno: errno) }
        guard let dir = fdopendir(listFD) else {
            let error = errno
            close(listFD)
            throw GroupStoreError.system("cannot list", path: path, errno: error)
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            // The name is read up to its terminating NUL, in place: a record
            // is only as long as its name (`d_reclen`), so copying the whole
            // 256-byte `d_name` field reads past the last record of the
            // buffer, into memory that may not be mapped.
            let name = String(cString: UnsafeRawPointer(entry).advanced(by: Self.nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { body(name) }
        }
    }
}

/// Calls `body` again while it fails with `EINTR`.
@inline(__always)
func retryingEINTR(_ body: () -> CInt) -> CInt {
    while true {
        let result = body()
        if result >= 0 || errno != EINTR { return result }
    }
}
