/// A remote whose busiest calls can also run on the calling thread: the
/// embedded remote, whose work is SQLite on this host.
///
/// The sync engine, on its own queue (``EngineQueue``), uses these instead
/// of the `async` calls of ``CloudDatabase``: an async call into GRDB is two
/// thread hand-offs, which cost about as much as the call itself. Remotes
/// that talk to a server (PostgreSQL) do not conform. Same rules, errors and
/// injected faults as the `async` calls.
protocol BlockingCloudDatabase: CloudDatabase {
    /// ``CloudDatabase/modify(_:)``, blocking the caller.
    func modifyNow(_ changes: [CloudRecordChange]) throws -> [CloudModifyResult]
    /// ``CloudDatabase/fetchChanges(in:since:limit:)``, blocking the caller.
    func fetchChangesNow(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) throws -> CloudChangeBatch
}

extension EmbeddedRemote: BlockingCloudDatabase {}
