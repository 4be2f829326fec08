import Foundation
import GRDB
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Looks into an existing group without joining it: no member name, no lock,
/// nothing delivered. For operators' tools (`groupstore status`, `history`,
/// `gc`) and for readers that follow the history themselves.
public final class GroupInspector: Sendable {
    let directory: GroupDirectory
    let pool: DatabasePool

    /// Opens the group at `path`.
    /// - Throws: ``GroupStoreError/Code/groupNotFound`` if there is no group there.
    public init(directory path: String) throws {
        let directory = try GroupDirectory(path: path, create: false)
        self.directory = directory
        guard let info = try directory.root.status(of: GroupDirectory.databaseFileName) else {
            throw GroupStoreError(.groupNotFound, "\(directory.path) has no database (store.sqlite)", path: directory.path)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw GroupStoreError(.unsafePath, "\(directory.databasePath) is not a regular file", path: directory.databasePath)
        }
        do {
            pool = try directory.withSetupLock {
                try DatabasePool(
                    path: directory.databasePath,
                    configuration: GroupConfiguration.sharedDatabaseConfiguration(label: "GroupInspector", busyTimeout: 10))
            }
            let hasHistory = try pool.read { db in try db.tableExists(HistorySchema.transactionTable) }
            guard hasHistory else {
                throw GroupStoreError(.groupNotFound, "\(directory.databasePath) has no GroupStore history", path: directory.databasePath)
            }
        } catch let error as GroupStoreError {
            throw error
        } catch {
            throw GroupStoreError(.database, "cannot open database \(directory.databasePath): \(error)", path: directory.databasePath)
        }
    }

    /// Members, cursors, history size and pending payloads.
    public func status() throws -> GroupStatus {
        let (head, pruned, transactions, changes) = try pool.read { db in
            (
                try HistorySchema.lastSeq(db), try HistorySchema.prunedThrough(db),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \(HistorySchema.transactionTable)") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \(HistorySchema.changeTable)") ?? 0
            )
        }
        var members: [GroupStatus.Member] = []
        for name in try directory.memberNames() {
            guard let folder = try? directory.memberFolder(name, create: false) else { continue }
            let payloads =
                (try? folder.entries())?.filter {
                    if case .payload = PayloadFileName.parse($0) { return true }
                    return false
                }.count ?? 0
            members.append(
                GroupStatus.Member(
                    name: name.rawValue, live: MemberLock.isHeld(in: folder), cursor: CursorFile.read(in: folder)?.seq,
                    payloadFiles: payloads))
        }
        var bytes: Int64 = 0
        for name in [GroupDirectory.databaseFileName, GroupDirectory.databaseFileName + "-wal"] {
            if let info = try? directory.root.status(of: name) { bytes += Int64(info.st_size) }
        }
        return GroupStatus(
            directory: directory.path, head: head, prunedThrough: pruned, historyTransactions: transactions,
            historyChanges: changes, databaseBytes: bytes, members: members)
    }

    /// Closed transactions after `seq`, oldest first, at most `limit`.
    public func history(after seq: Int64, limit: Int = 512) throws -> [Save] {
        try pool.read { db in
            var names = try TableNames.load(db)
            return try HistoryReader.read(db, after: seq, limit: limit, names: &names).saves.filter {
                $0.kind == .resync || !$0.changes.isEmpty
            }
        }
    }

    /// Prunes now (see ``GroupConfiguration/retention``).
    public func prune(retention: TimeInterval, now: Date = Date(), logger: Logger = Logger(label: "GroupStore")) throws -> PruneReport {
        try Pruner(pool: pool, directory: directory, retention: retention, logger: logger).prune(now: now)
    }
}
