import GRDB
import GroupStore

extension SyncEngine {
    /// A read transaction on the group's database, run on the engine's own
    /// thread (GRDB's synchronous API: no hand-off, see ``EngineQueue``).
    func readDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.read(body)
    }

    /// A write transaction of the bridge's own bookkeeping (not recorded
    /// in the history: only `groupstore_cloud_*` tables), on the engine's thread.
    func writeDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        // What an acknowledgement recorded of the sync may no longer hold.
        state.lastSync.acknowledged = nil
        return try pool.write(body)
    }

    /// A write through the store (recorded in the history as the bridge
    /// member's transaction), on the engine's thread.
    func writeStore<T>(_ body: (Database) throws -> T) throws -> T {
        state.lastSync.acknowledged = nil
        return try store.writeBlocking(body)
    }

    /// A transaction that rewrites the sync state's tables (a change of
    /// account, a complete sync, a remote found replaced or restored): what
    /// moved since it was stored is stored first, in the same transaction,
    /// then `body` rewrites; once it committed, the engine forgets what it
    /// kept of the sync state (``EngineState/forgetCachedState()``) and
    /// records the work `body` gave the upload. Every such path goes
    /// through here, so none reuses a token or a mark the rewrite replaced.
    /// `throughStore`: the rewrite changes the app's tables too (recorded in
    /// the history as the bridge's own).
    func rewriteSyncState<T>(throughStore: Bool, _ body: (Database, inout UploadWork) throws -> T) throws -> T {
        let moved = state.moved
        var work = UploadWork()
        let rewrite = { (db: Database) throws -> T in
            try Self.store(moved, in: db)
            return try body(db, &work)
        }
        let value = try throughStore ? writeStore(rewrite) : writeDatabase(rewrite)
        state.forgetCachedState()
        state.record(.gave(work))
        return value
    }

    /// Writes what moved of the sync state since it was stored (``EngineState/moved``).
    static func store(_ moved: (tokens: [CloudZone: CloudChangeToken?], remoteSeen: CloudHistoryMark??), in db: Database) throws {
        for (zone, token) in moved.tokens { try SyncState.setToken(db, zone: zone, token) }
        if case .some(.some(let seen)) = moved.remoteSeen { try SyncState.setRemoteSeen(db, seen) }
    }
}
