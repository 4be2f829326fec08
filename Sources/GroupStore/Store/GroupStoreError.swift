import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The error type of the GroupStore module.
///
/// Every error carries a ``code`` to match and a one-line ``message`` that
/// names the path or member involved:
///
/// ```swift
/// do {
///     let store = try GroupStore(configuration)
/// } catch GroupStoreError.memberAlreadyLive {
///     print("another process already runs as this member")
/// }
/// ```
///
/// Errors thrown by your own database code inside ``GroupStore/write(_:)``
/// (GRDB's `DatabaseError`, for instance) pass through unchanged.
public struct GroupStoreError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// What went wrong. Match it directly: `catch GroupStoreError.invalidMemberName`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A member name is empty, too long, or has a character outside `A-Z a-z 0-9 . _ - @ +`.
        public static let invalidMemberName = Code("invalidMemberName")
        /// Another live process already holds this member name in this group.
        public static let memberAlreadyLive = Code("memberAlreadyLive")
        /// The group directory does not exist (and creating it was not asked for).
        public static let groupNotFound = Code("groupNotFound")
        /// Something under the group directory is a symbolic link, or not the kind of file expected.
        public static let unsafePath = Code("unsafePath")
        /// The process may not read or write a path of the group.
        public static let permissionDenied = Code("permissionDenied")
        /// The disk is full.
        public static let diskFull = Code("diskFull")
        /// Any other file-system failure; see ``GroupStoreError/errno``.
        public static let fileSystem = Code("fileSystem")
        /// The shared database could not be opened or prepared.
        public static let database = Code("database")
        /// One of your migrations failed (the message names it; the error it
        /// threw is ``GroupStoreError/underlying``). Nothing of it was committed.
        public static let migrationFailed = Code("migrationFailed")
        /// The store was closed.
        public static let closed = Code("closed")
        /// The group directory, or its database file, was removed or replaced
        /// while this member ran: writes are refused (they would go to a file
        /// no other member sees). Open the store again.
        public static let groupReplaced = Code("groupReplaced")
        /// A configuration value is out of range.
        public static let invalidConfiguration = Code("invalidConfiguration")

        /// Matches an error against a code: `catch GroupStoreError.closed`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? GroupStoreError)?.code == code
        }
    }

    // The codes, also as members of the error type, so `catch
    // GroupStoreError.memberAlreadyLive` reads like GRDB's `catch DatabaseError.SQLITE_BUSY`.
    public static let invalidMemberName = Code.invalidMemberName
    public static let memberAlreadyLive = Code.memberAlreadyLive
    public static let groupNotFound = Code.groupNotFound
    public static let unsafePath = Code.unsafePath
    public static let permissionDenied = Code.permissionDenied
    public static let diskFull = Code.diskFull
    public static let fileSystem = Code.fileSystem
    public static let database = Code.database
    public static let migrationFailed = Code.migrationFailed
    public static let closed = Code.closed
    public static let groupReplaced = Code.groupReplaced
    public static let invalidConfiguration = Code.invalidConfiguration

    /// What went wrong.
    public var code: Code
    /// One line saying what failed, naming the path or member.
    public var message: String
    /// The path involved, if any.
    public var path: String?
    /// The system error number, or 0.
    public var errno: Int32
    /// The error this one wraps (GRDB's `DatabaseError` from a failing
    /// migration, for instance), kept as it was thrown.
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, path: String? = nil, errno: Int32 = 0, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.errno = errno
        self.underlying = underlying
    }

    /// Equal when code, message, path and errno are (the underlying error is
    /// not compared).
    public static func == (lhs: GroupStoreError, rhs: GroupStoreError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.path == rhs.path && lhs.errno == rhs.errno
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(path)
        hasher.combine(errno)
    }

    public var description: String { message }

    /// The message, for `localizedDescription` and logs.
    public var errorDescription: String? { message }

    /// An error for a failed system call on `path`.
    static func system(_ what: String, path: String, errno: Int32) -> GroupStoreError {
        let code: Code
        switch errno {
        case EACCES, EPERM: code = .permissionDenied
        case ENOSPC, EDQUOT: code = .diskFull
        case ELOOP, ENOTDIR: code = .unsafePath
        default: code = .fileSystem
        }
        let reason = errno == ELOOP ? "is a symbolic link" : String(cString: strerror(errno))
        return GroupStoreError(code, "\(what) \(path): \(reason)", path: path, errno: errno)
    }
}
