import Foundation
import GRDB
import Logging

/// Joining a group: the history made ready for this member, and where it
/// starts reading. Runs while the store opens, under the group's setup lock.
enum GroupJoin {
    /// Creates (or upgrades) the history, runs the migrations and tracks the
    /// tables. Takes SQLite's write lock only when something needs writing, and
    /// then waits for it as long as another process holds it.
    /// - Returns: the payload of what the migrations committed, if anything.
    static func prepareSchema(
        pool: DatabasePool, tracker: SchemaTracker, configuration: GroupConfiguration, directory: GroupDirectory
    ) throws -> Payload? {
        let logger = configuration.logger
        do {
            let migrator = configuration.migrator
            let needsWrite = try pool.read { db -> Bool in
                if try !HistorySchema.isUpToDate(db) { return true }
                if try SchemaTracker.needsRefreshOrTriggerUpgrade(db) { return true }
                return try !(migrator?.hasCompletedMigrations(db) ?? true)
            }
            guard needsWrite else { return nil }
            try WriteLockWait.retrying(logger: logger, path: directory.databasePath) {
                try pool.write { db in
                    // A new history adopts the tables already there; schema
                    // changes made outside the library while no member ran are
                    // theirs (a table created then is delivered whole), not
                    // this member's. Triggers of another format are replaced.
                    if try HistorySchema.create(db) {
                        try tracker.refresh(db, adopt: true)
                    } else if try SchemaTracker.needsRefreshOrTriggerUpgrade(db) {
                        try tracker.refresh(db)
                    }
                    try HistorySchema.closeOpenTransaction(db)
                }
            }
            if let migrator { try migrate(migrator, pool: pool, directory: directory, logger: logger) }
            return try WriteLockWait.retrying(logger: logger, path: directory.databasePath) {
                try pool.write { db -> Payload? in
                    // Tables the migrations created are tracked, their rows recorded.
                    if try SchemaTracker.needsRefresh(db) { try tracker.refresh(db) }
                    var names = TableNames()
                    return try Payload.seal(db, state: HistorySchema.state(db), author: configuration.member, names: &names)
                }
            }
        } catch let error as GroupStoreError {
            throw error
        } catch let error as DatabaseError {
            throw GroupStoreError(
                .database, "cannot prepare database \(directory.databasePath): \(error.message ?? "\(error)")",
                path: directory.databasePath, underlying: error)
        } catch {
            throw GroupStoreError(
                .database, "cannot prepare database \(directory.databasePath): \(error)", path: directory.databasePath,
                underlying: error)
        }
    }

    /// Where this member starts: its durable cursor if it belongs to this
    /// history, else a resync; a new consumer starts at the present, written
    /// before the member is reported live.
    static func startingPoint(
        pool: DatabasePool, member: MemberName, folder: DirectoryHandle, directory: GroupDirectory, writesOnly: Bool,
        logger: Logger
    ) throws -> Merger.Start {
        let file = CursorFile.read(in: folder)
        let (head, epoch, fingerprint, prunedThrough) = try pool.read { db -> (Int64, String, Double?, Int64) in
            let head = try HistorySchema.lastSeq(db)
            return (
                head, try String.fetchOne(db, sql: "SELECT value FROM \(HistorySchema.metaTable) WHERE key = 'epoch'") ?? "",
                try HistorySchema.committedAt(db, seq: file?.seq ?? head)?.timeIntervalSince1970, try HistorySchema.prunedThrough(db)
            )
        }
        guard let file else {
            // A new consumer starts at the present, written down now, before
            // its lock says it is live (a member that only writes keeps none).
            let start = CursorFile(seq: head, epoch: epoch, fingerprint: fingerprint)
            guard !writesOnly else { return Merger.Start(cursor: start, resync: false, onDisk: false) }
            do {
                try start.write(member: member, in: folder, staging: directory.staging)
            } catch {
                // A full or read-only disk: written again with the next delivery.
                logger.info("cannot write the cursor yet", metadata: ["error": "\(error.message)"])
                return Merger.Start(cursor: start, resync: false, onDisk: false)
            }
            return Merger.Start(cursor: start, resync: false, onDisk: true)
        }
        var problem: String?
        if let known = file.epoch, known != "-", known != epoch {
            problem = "the database is another group's (or its history was recreated)"
        } else if file.seq > head {
            problem = "the cursor \(file.seq) is past the newest transaction \(head) (a restored or reset database)"
        } else if let expected = file.fingerprint, let found = fingerprint, abs(expected - found) > CursorFile.fingerprintTolerance {
            problem = "transaction \(file.seq) is not the one this member saw (a restored database)"
        } else if file.fingerprint != nil, fingerprint == nil, file.seq > prunedThrough {
            // The cursor named a transaction (it has its time), and no
            // transaction has that number here: another history's row.
            problem = "transaction \(file.seq) is not in the history (a restored database)"
        }
        if let problem {
            logger.info("member will resync: \(problem)", metadata: ["member": "\(member)"])
        }
        return Merger.Start(
            cursor: CursorFile(seq: file.seq, epoch: epoch, fingerprint: file.fingerprint), resync: problem != nil, onDisk: true)
    }

    /// Clears the writer connection's schema cache (its observers must know
    /// every table the merges announce); the schema version it matches.
    static func clearedWriterCache(pool: DatabasePool, directory: GroupDirectory) throws(GroupStoreError) -> Int64 {
        do {
            return try ObserverRefresh.clearedWriterCache(pool: pool)
        } catch {
            throw GroupStoreError(
                .database, "cannot read the schema of \(directory.databasePath): \(error)", path: directory.databasePath, underlying: error)
        }
    }

    /// Runs the app's pending migrations one at a time, so a failing one is
    /// named: ``GroupStoreError/Code/migrationFailed`` with its identifier,
    /// the error it threw kept as ``GroupStoreError/underlying``.
    private static func migrate(_ migrator: DatabaseMigrator, pool: DatabasePool, directory: GroupDirectory, logger: Logger) throws {
        let applied = try pool.read { db in try migrator.appliedMigrations(db) }
        let known = migrator.migrations
        // Those after the last one applied, in order (GRDB refuses to migrate
        // "up to" one that a later one already passed).
        let pending = known.lastIndex(where: applied.contains).map { Array(known[($0 + 1)...]) } ?? known
        for identifier in pending {
            do {
                try WriteLockWait.retrying(logger: logger, path: directory.databasePath) { try migrator.migrate(pool, upTo: identifier) }
            } catch {
                let reason = (error as? DatabaseError)?.message ?? "\(error)"
                throw GroupStoreError(
                    .migrationFailed, "migration '\(identifier)' failed in \(directory.databasePath): \(reason)",
                    path: directory.databasePath,
                    underlying: error)
            }
        }
    }
}
