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
        let tables = self.tables
        let entries = tables.map(entry)
        let zones = tables.map(zone)
        let configured = entries.sorted().joined(separator: "\n")
        return try await store.write { db -> Int64 in
            try SyncStateSchema.migrate(db)
            // A new engine compares the tables marked here at its first sync (``EngineState/reasons``).
            var work = UploadWork()
            let known = String.fromDatabaseValue(try SyncState.value(db, "tables"))
            let previous = Set((known ?? "").split(separator: "\n").map(String.init))
            let previousTables = Set(previous.map { $0.split(separator: "\t").prefix(2).joined(separator: "\t") })
            for ((table, entry), tableZone) in zip(zip(tables, entries), zones) where !previous.contains(entry) {
                try work.markForDiff(db, entity: table.name)
                if known != nil, !previousTables.contains(entry.split(separator: "\t").prefix(2).joined(separator: "\t")) {
                    if table.scope == .private {
                        // The account is not known here: every private zone's (one, the account's).
                        try db.execute(sql: "DELETE FROM \(SyncState.zone) WHERE zone LIKE 'private/%'")
                    } else {
                        try SyncState.dropToken(db, zone: tableZone)
                    }
                }
            }
            if known == nil {
                let head = try Int64.fetchOne(db, sql: "SELECT seq FROM groupstore_transaction ORDER BY seq DESC LIMIT 1") ?? 0
                try SyncState.setIntakePosition(db, head)
            }
            try SyncState.setValue(db, "tables", configured)
            // A table that has a column now is no longer short of it.
            for table in tables { try SyncState.clearDrift(db, entity: table.name, columns: table.columns.map(\.name)) }
            try SyncState.pruneTombstones(db, now: Date())
            return try SyncState.intakePosition(db)
        }
    }
}
