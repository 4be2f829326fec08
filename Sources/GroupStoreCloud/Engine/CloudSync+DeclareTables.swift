import Foundation
import GRDB
import GroupStore

extension CloudSync {
    /// Declares on the remote the record types of the tables `configuration`
    /// names (their scope, columns and key, read from the group's store),
    /// without syncing a row. `groupstore cloud setup --group DIR --tables …`
    /// runs it.
    ///
    /// On a PostgreSQL server, public and shared tables are declared this way
    /// by the schema's owner before users sync them: a user's first sync of an
    /// undeclared public or shared table is refused, so no user chooses a
    /// table's scope and columns for the others. Private tables need no
    /// declaration (each user's rows are their own), but the owner may declare
    /// one to give it columns a user's type lacks. Other remotes accept every
    /// declaration, as their first sync would.
    ///
    /// - Returns: the types declared, parents before the tables that reference them.
    /// - Throws: ``CloudSyncError``: ``CloudSyncError/Code/tableRefused`` for a
    ///   table that cannot be synced, ``CloudSyncError/Code/store`` for a group
    ///   that cannot be read, and the remote's errors (on PostgreSQL,
    ///   ``CloudSyncError/Code/permissionDenied`` for a role that may not
    ///   declare the type, ``CloudSyncError/Code/scopeChanged`` for a type
    ///   declared with another scope).
    public static func declareTables(_ configuration: CloudSyncConfiguration) async throws -> [CloudRecordType] {
        let request = SchemaMapper.Request(
            privateTables: configuration.privateTables, publicTables: configuration.publicTables,
            sharedTables: configuration.sharedTables, assetColumns: configuration.assetColumns)
        let group = configuration.group
        let types = try await offThePool { () throws -> [CloudRecordType] in
            let inspector: GroupInspector
            do {
                inspector = try GroupInspector(directory: group)
            } catch {
                throw CloudSyncError(.store, "cannot read group \(group): \(error)", underlying: error)
            }
            return try inspector.databasePool.read { db in
                try SchemaMapper.map(request, in: db, path: group + "/store.sqlite").map(\.recordType)
            }
        }
        try await configuration.remote.prepare(types)
        return types
    }
}
