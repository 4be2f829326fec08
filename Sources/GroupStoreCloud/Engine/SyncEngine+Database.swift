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
        try pool.write(body)
    }

    /// A write through the store (recorded in the history as the bridge
    /// member's transaction), on the engine's thread.
    func writeStore<T>(_ body: (Database) throws -> T) throws -> T {
        try store.writeBlocking(body)
    }
}
