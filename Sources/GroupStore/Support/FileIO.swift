#if canImport(Glibc)
    import Glibc
#endif

/// Small, checked read/write helpers over raw descriptors.
enum FileIO {
    /// Writes all of `bytes` to `fd`, retrying partial writes and `EINTR`.
    /// - Returns: 0 on success, or the `errno` of the failure.
    static func writeAll(_ fd: CInt, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let count = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += count
        }
        return 0
    }

    /// Reads a regular file of at most `limit` bytes.
    /// - Returns: the bytes, or `nil` if it is not a regular file or is larger.
    static func readRegularFile(_ fd: CInt, limit: Int) -> [UInt8]? {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            offset += count
        }
        return Array(bytes[0..<offset])
    }

    /// The whole file `name` in `directory`, read without following links.
    static func read(_ name: String, in directory: DirectoryHandle, limit: Int) throws(GroupStoreError) -> [UInt8]? {
        let fd = try directory.openFile(name, flags: O_RDONLY | O_NONBLOCK)
        defer { close(fd) }
        return readRegularFile(fd, limit: limit)
    }

    /// Writes `bytes` to a new file in `staging`, then renames it to `name` in
    /// `directory`: readers see all of it or nothing. Not fsynced: the
    /// database, not this file, is what must survive a power cut.
    static func publish(
        _ bytes: [UInt8], as name: String, in directory: DirectoryHandle, staging: DirectoryHandle, tempName: String
    ) throws(GroupStoreError) {
        let fd = try staging.openFile(tempName, flags: O_WRONLY | O_CREAT | O_EXCL)
        let error = bytes.withUnsafeBytes { writeAll(fd, $0) }
        close(fd)
        if error != 0 {
            try? staging.removeFile(tempName)
            throw GroupStoreError.system("cannot write", path: staging.path + "/" + tempName, errno: error)
        }
        do {
            try staging.rename(tempName, to: name, in: directory)
        } catch {
            try? staging.removeFile(tempName)
            throw error
        }
    }
}
