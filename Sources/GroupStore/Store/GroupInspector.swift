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
                try directory.openPool(
                    configuration: GroupConfiguration.sharedDatabaseConfiguration(label: "GroupInspector", busyTimeout: 10))
            }
            switch try pool.read({ db in try HistorySchema.status(db) }) {
            case .current: break
            case .missing:
                throw GroupStoreError(.groupNotFound, "\(directory.databasePath) has no GroupStore history", path: directory.databasePath)
            case .outdated(let format):
                throw GroupStoreError(
                    .database,
                    "\(directory.databasePath): the GroupStore history is of format \(format); a member of this version upgrades it to format \(HistorySchema.formatVersion) when it joins (for example groupstore exec)",
                    path: directory.databasePath)
            case .newer(let format):
                throw HistorySchema.newerFormat(format, path: directory.databasePath)
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
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM \(HistorySchema.changeTable) WHERE op = \(HistorySchema.markerOperation)") ?? 0,
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM \(HistorySchema.changeTable) WHERE op <> \(HistorySchema.markerOperation)") ?? 0
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
            let cursor = CursorFile.read(in: folder)?.seq
            // Sequence numbers are the markers' row ids, so not consecutive:
            // the transactions after the cursor are counted.
            let behind = try cursor.map { cursor in
                try pool.read { db in
                    try Int64.fetchOne(
                        db,
                        sql:
                            "SELECT count(*) FROM \(HistorySchema.changeTable) WHERE id > ? AND id <= ? AND op = \(HistorySchema.markerOperation)",
                        arguments: [cursor, head]) ?? 0
                }
            }
            members.append(
                GroupStatus.Member(
                    name: name.rawValue, live: MemberLock.isHeld(in: folder), cursor: cursor, behind: behind, payloadFiles: payloads))
        }
        var bytes: Int64 = 0
        for name in [GroupDirectory.databaseFileName, GroupDirectory.databaseFileName + "-wal"] {
            if let info = try? directory.root.status(of: name) { bytes += Int64(info.st_size) }
        }
        // Everything pruned (the newest row kept being an outside writer's
        // change no member closed yet): the head is at least what was pruned.
        return GroupStatus(
            directory: directory.path, head: max(head, pruned), prunedThrough: pruned, historyTransactions: transactions,
            historyChanges: changes, databaseBytes: bytes, members: members)
    }

    /// Closed transactions after `seq`, oldest first, at most `limit` (fewer
    /// when some are left out for changing nothing in the end; empty at the end
    /// of the history).
    public func history(after seq: Int64, limit: Int = 512) throws -> [Save] {
        try pool.read { db in
            var names = try TableNames.load(db)
            var cursor = seq
            // Net-empty transactions (a row inserted and deleted again) are
            // left out; read on until something is left, or the end.
            while true {
                let batch = try HistoryReader.read(db, after: cursor, limit: limit, names: &names)
                let saves = batch.saves.filter { !$0.changes.isEmpty }
                guard saves.isEmpty, batch.hasMore, let last = batch.saves.last else { return saves }
                cursor = last.seq
            }
        }
    }

    /// Removes a member that is not running: its cursor (so it no longer
    /// holds back pruning), its payload files and its folder. The member's
    /// lock is held meanwhile, so it cannot start while it is being retired.
    ///
    /// - Throws: ``GroupStoreError/Code/memberAlreadyLive`` if a process runs
    ///   as that member; ``GroupStoreError/Code/groupNotFound`` if it has no folder.
    @discardableResult
    public func retire(_ member: MemberName) throws -> RetireReport {
        guard (try? directory.members.status(of: member.rawValue)) ?? nil != nil else {
            throw GroupStoreError(
                .groupNotFound, "member '\(member)' has no folder in \(directory.membersPath)", path: directory.membersPath)
        }
        let folder = try directory.memberFolder(member, create: false)
        let lock = try MemberLock(member: member, folder: folder, group: directory.path)
        var report = RetireReport(member: member.rawValue, cursor: CursorFile.read(in: folder)?.seq, filesRemoved: 0)
        for entry in try folder.entries() where entry != MemberLock.fileName {
            try folder.removeFile(entry)
            report.filesRemoved += 1
        }
        try folder.removeFile(MemberLock.fileName)
        try directory.members.removeDirectory(member.rawValue)
        // Held until the folder is gone.
        withExtendedLifetime(lock) {}
        return report
    }

    /// Prunes now (see ``GroupConfiguration/retention``).
    public func prune(retention: TimeInterval, now: Date = Date(), logger: Logger = Logger(label: "GroupStore")) throws -> PruneReport {
        try Pruner(pool: pool, directory: directory, retention: retention, logger: logger).prune(now: now)
    }
}
