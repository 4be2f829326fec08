import GRDB

/// The registry of tracked tables as the reader needs it: each id's current
/// name, and whether its keys are composite.
struct TableNames: Sendable {
    struct Entry: Sendable {
        var name: String
        var composite: Bool
    }

    private(set) var entries: [Int64: Entry] = [:]
    /// `registry_version` when read: the registry changes only with it.
    private(set) var version: Int64 = -1

    static func load(_ db: Database) throws -> TableNames {
        var names = TableNames()
        names.version = try HistorySchema.meta(db, "registry_version").storage.int64 ?? 0
        for row in try Row.fetchAll(db, sql: "SELECT id, name, key_columns FROM \(HistorySchema.tableRegistry)") {
            names.entries[row[0]] = Entry(name: row[1], composite: (row[2] as Int) > 1)
        }
        return names
    }

    /// This registry, reloaded if it changed since.
    func current(_ db: Database) throws -> TableNames {
        try current(db, version: HistorySchema.meta(db, "registry_version").storage.int64 ?? 0)
    }

    /// This registry, reloaded unless it is of `version` (read by the caller).
    func current(_ db: Database, version now: Int64) throws -> TableNames {
        now == version ? self : try Self.load(db)
    }

    subscript(id: Int64) -> Entry? { entries[id] }
}

extension DatabaseValue.Storage {
    var int64: Int64? {
        switch self {
        case .int64(let value): return value
        case .double(let value): return Int64(exactly: value)
        case .string(let text): return Int64(text)
        default: return nil
        }
    }
}
