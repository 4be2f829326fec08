import Foundation
import GRDB
import GroupStore

/// Brings the sync state in line with the tables a new engine syncs: its
/// schema migrated, a table synced for the first time (or with another
/// scope or other columns) marked to be compared in full, and at the very
/// first start the intake position set to the history's head (what is in
/// the tables then is covered by that comparison).
struct SyncStateSetup {
    let tables: [MappedTable]
    /// The zone each table syncs with (for a shared table's entry).
    let zone: (MappedTable) -> CloudZone

    /// How a table is known in the sync state: its name, its scope (and
    /// shared zone) and its columns; a table whose entry changed is
    /// compared in full again.
    func entry(_ table: MappedTable) -> String {
        let scope = table.scope == .shared ? zone(table).description : table.scope.rawValue
        return ([table.name.lowercased(), scope] + table.columns.map(\.name)).joined(separator: "\t")
    }

    /// Prepares the state of `store`'s database; returns the intake position.
    func prepare(_ store: GroupStore) async throws -> Int64 {
        try await SyncStateSchema.migrate(store.pool)
        let tables = self.tables
        let entries = tables.map(entry)
        let configured = entries.sorted().joined(separator: "\n")
        return try await store.write { db -> Int64 in
            let known = String.fromDatabaseValue(try SyncState.value(db, "tables"))
            let previous = Set((known ?? "").split(separator: "\n").map(String.init))
            for (table, entry) in zip(tables, entries) where !previous.contains(entry) {
                try SyncState.markForDiff(db, entity: table.name)
            }
            if known == nil {
                let head = try Int64.fetchOne(db, sql: "SELECT seq FROM groupstore_transaction ORDER BY seq DESC LIMIT 1") ?? 0
                try SyncState.setIntakePosition(db, head)
            }
            try SyncState.setValue(db, "tables", configured)
            return try SyncState.intakePosition(db)
        }
    }
}
