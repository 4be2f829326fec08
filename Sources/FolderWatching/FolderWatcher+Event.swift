#if canImport(Glibc)
    import Glibc
#endif

extension FolderWatcher {
    /// The kinds of change a watch reports.
    public struct Mask: OptionSet, Hashable, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// An entry was created in a watched directory.
        public static let created = Mask(rawValue: UInt32(IN_CREATE))
        /// An entry was renamed into a watched directory (how atomic publishing ends).
        public static let movedIn = Mask(rawValue: UInt32(IN_MOVED_TO))
        /// An entry was renamed out of a watched directory.
        public static let movedOut = Mask(rawValue: UInt32(IN_MOVED_FROM))
        /// An entry was deleted from a watched directory.
        public static let deleted = Mask(rawValue: UInt32(IN_DELETE))
        /// A watched file, or a file in a watched directory, was written.
        public static let modified = Mask(rawValue: UInt32(IN_MODIFY))
        /// A file opened for writing was closed.
        public static let closedAfterWrite = Mask(rawValue: UInt32(IN_CLOSE_WRITE))
        /// Permissions, ownership or timestamps changed.
        public static let attributesChanged = Mask(rawValue: UInt32(IN_ATTRIB))

        /// Everything that changes a directory's list of entries.
        public static let entries: Mask = [.created, .movedIn, .movedOut, .deleted]
    }

    /// One thing that happened to a watched path.
    public struct Event: Hashable, Sendable, CustomStringConvertible {
        /// What happened.
        public enum Kind: Hashable, Sendable {
            case created, movedIn, movedOut, deleted, modified, closedAfterWrite, attributesChanged
            /// The watch ended: the watched path was deleted, moved away or
            /// unmounted. Watch it again once it exists again.
            case watchEnded
            /// The kernel's event queue overflowed and events were lost:
            /// rescan whatever you watch.
            case overflow
        }

        /// What happened.
        public var kind: Kind
        /// The watched path the event belongs to (empty for ``Kind/overflow``).
        public var path: String
        /// The entry inside the watched directory, or `nil` when the event
        /// is about the watched path itself.
        public var name: String?
        /// Whether the entry is a directory.
        public var isDirectory: Bool

        public init(kind: Kind, path: String, name: String? = nil, isDirectory: Bool = false) {
            self.kind = kind
            self.path = path
            self.name = name
            self.isDirectory = isDirectory
        }

        public var description: String {
            let target = name.map { "\(path)/\($0)" } ?? path
            return "\(kind) \(target)\(isDirectory ? "/" : "")"
        }

        /// Maps a kernel mask to a kind; `nil` for bits no caller asked about.
        static func kind(for mask: UInt32) -> Kind? {
            if mask & UInt32(IN_Q_OVERFLOW) != 0 { return .overflow }
            if mask & UInt32(IN_IGNORED) != 0 { return .watchEnded }
            if mask & UInt32(IN_MOVED_TO) != 0 { return .movedIn }
            if mask & UInt32(IN_CREATE) != 0 { return .created }
            if mask & UInt32(IN_MOVED_FROM) != 0 { return .movedOut }
            if mask & UInt32(IN_DELETE) != 0 { return .deleted }
            if mask & UInt32(IN_MODIFY) != 0 { return .modified }
            if mask & UInt32(IN_CLOSE_WRITE) != 0 { return .closedAfterWrite }
            if mask & UInt32(IN_ATTRIB) != 0 { return .attributesChanged }
            return nil
        }
    }
}
