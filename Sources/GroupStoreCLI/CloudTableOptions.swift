import ArgumentParser
import Foundation
import GroupStoreCloud

/// The tables to sync (or to declare, with `cloud setup`), by scope, and the
/// blob columns stored as assets.
struct CloudTableOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Private tables to sync (comma-separated): only their owner (--user) sees them.", valueName: "A,B"))
    var tables: String = ""

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Public tables to sync (comma-separated): every user reads them, each row is written by its creator.", valueName: "C"))
    var publicTables: String = ""

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Shared tables to sync (comma-separated): their rows live in --shared-zone, read by its owner and the users it is shared with.",
            valueName: "D"))
    var sharedTables: String = ""

    @Option(
        name: .long,
        help: ArgumentHelp("Blob columns always stored as assets (comma-separated table.column).", valueName: "table.column,…"))
    var assetColumns: String?

    /// Some table is named, in any scope.
    var namesAny: Bool {
        !Self.list(tables).isEmpty || !Self.list(publicTables).isEmpty || !Self.list(sharedTables).isEmpty
    }

    /// The asset columns, each of a table named (checked before anything is opened).
    func assets() throws -> [String: Set<String>] {
        try Self.assetColumns(assetColumns, synced: Self.list(tables) + Self.list(publicTables) + Self.list(sharedTables))
    }

    /// Sets the configuration's tables and asset columns (``assets()``).
    func apply(to configuration: inout CloudSyncConfiguration, assets: [String: Set<String>]) {
        configuration.privateTables = Self.list(tables)
        configuration.publicTables = Self.list(publicTables)
        configuration.sharedTables = Self.list(sharedTables)
        configuration.assetColumns = assets
    }

    /// `A, B,,C` → `["A", "B", "C"]`.
    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `note.body,photo.data` → `["note": ["body"], "photo": ["data"]]`;
    /// each table must be one of those synced.
    static func assetColumns(_ text: String?, synced: [String]) throws -> [String: Set<String>] {
        guard let text else { return [:] }
        var columns: [String: Set<String>] = [:]
        for item in list(text) {
            let parts = item.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw CommandFailure(message: "--asset-columns takes table.column items separated by commas; '\(item)' is not one")
            }
            guard let table = synced.first(where: { $0.lowercased() == parts[0].lowercased() }) else {
                throw CommandFailure(
                    message:
                        "--asset-columns names \(item), but table \(parts[0]) is not synced (give it in --tables, --public-tables or --shared-tables)"
                )
            }
            columns[table, default: []].insert(parts[1])
        }
        return columns
    }
}
