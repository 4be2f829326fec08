/// Which tables the history records.
public enum TrackedTables: Hashable, Sendable {
    /// Every user table (the default): all but SQLite's, GRDB's and the
    /// library's own, views, virtual and shadow tables.
    case all
    /// Only these tables (names compared as SQLite does, ignoring ASCII case).
    case only(Set<String>)

    func includes(_ table: String) -> Bool {
        switch self {
        case .all: return true
        case .only(let names): return names.contains { EntityName.same($0, table) }
        }
    }
}
