import Foundation
import GRDB
import GroupStore
import Logging

extension SyncEngine {
    /// The steps left of ``EngineState/setupLeft``, each removed once done
    /// (a step that fails is tried again at the next sync).
    func setUp() async throws {
        if state.setupLeft.contains(.closeShellChanges) {
            // Changes the shell committed that no member has closed yet become a transaction.
            try writeStore { _ in }
            state.setupLeft.remove(.closeShellChanges)
        }
        if state.setupLeft.contains(.takeInHistoryBacklog) {
            try takeInHistoryBacklog()
            state.setupLeft.remove(.takeInHistoryBacklog)
        }
        // Rows written before sync was on are compared before the account
        // check, which may clear the sync state.
        try runDiffs()
        if state.setupLeft.contains(.checkAccount) {
            try await checkAccount()
            state.setupLeft.remove(.checkAccount)
        }
        // Before the types are prepared (the first sync, or after a reset): a remote replaced or restored is
        // found first. Every other sync has the history checked by its fetches and uploads themselves.
        if state.setupLeft.contains(.prepareRemote) { try await checkRemoteHistory() }
        try await prepareRemoteIfAsked()
    }

    /// Declares the synced tables' record types to the remote, if a setup
    /// step or a remote found replaced or restored asks for it.
    func prepareRemoteIfAsked() async throws {
        guard state.setupLeft.contains(.prepareRemote) else { return }
        let types = tables.map(\.recordType)
        try await Retry.run(configuration, "prepare the tables on \(remote.displayName)") { try await self.remote.prepare(types) }
        state.setupLeft.remove(.prepareRemote)
    }

    /// A one-shot sync's intake: the history after the intake position, a
    /// page per transaction (each holds the write lock briefly).
    private func takeInHistoryBacklog() throws {
        let backlog = HistoryBacklog(store: store)
        while true {
            let position = state.intakePosition
            let page = try readDatabase { db in try backlog.page(after: position, in: db) }
            guard !page.saves.isEmpty else { return }
            try takeIn(page.saves)
            if !page.hasMore { return }
        }
    }

    /// Checks the remote's user; on a change of account, purges or
    /// re-uploads as configured.
    private func checkAccount() async throws {
        let account = try await Retry.run(configuration, "check the account on \(remote.displayName)") {
            try await self.remote.account()
        }
        let tables = self.tables
        let accountChange = configuration.accountChange
        let group = configuration.group
        let known = try readDatabase { db in String.fromDatabaseValue(try SyncState.value(db, "account")) }
        if let known, known != account {
            if accountChange == .refuse {
                throw CloudSyncError(
                    .accountChanged,
                    "group \(group) syncs as \(known), not \(account): nothing was synced (choose purge or upload for a change of user)")
            }
            try rewriteSyncState(throughStore: true) { db, work in
                if accountChange == .purge {
                    // The deletions are this member's own: they are not taken in, so not uploaded.
                    for table in tables.reversed() { try db.execute(sql: "DELETE FROM \(quote(table.name))") }
                }
                try SyncState.forgetRecords(db)
                if accountChange == .upload { for table in tables { try work.markForDiff(db, entity: table.name) } }
                try SyncState.setValue(db, "account", account)
            }
            logger.info("account changed", metadata: ["account": "\(account)", "action": "\(accountChange.rawValue)"])
        } else if known == nil {
            try writeDatabase { db in try SyncState.setValue(db, "account", account) }
        }
        state.account = account
    }

    /// A complete sync: every zone listed again, every table compared with
    /// its synced state, uploads parked on conflict given another chance.
    func startCompleteSync() throws {
        let tables = self.tables
        try rewriteSyncState(throughStore: false) { db, work in
            try db.execute(sql: "DELETE FROM \(SyncState.zone)")
            for table in tables { try work.markForDiff(db, entity: table.name) }
            try db.execute(sql: "DELETE FROM \(SyncState.parked) WHERE direction = 'up'")
            try db.execute(sql: "UPDATE \(SyncState.pending) SET rounds = 0")
        }
    }

    /// Compares the tables marked for a diff with their last acknowledged
    /// versions and marks every difference pending.
    func runDiffs() throws {
        guard state.reasons.contains(.tablesToDiff) else { return }
        let entities = try readDatabase { try String.fetchAll($0, sql: "SELECT entity FROM \(SyncState.diff)") }
        var work = UploadWork()
        for entity in entities {
            let applier = self.applier
            try writeDatabase { db in
                defer { _ = try? db.execute(sql: "DELETE FROM \(SyncState.diff) WHERE entity = ?", arguments: [entity]) }
                guard let table = applier.table(named: entity) else { return }
                let rows = try applier.codec(table).readAll(in: db)
                var known: Set<String> = []
                let now = applier.clock()
                let records = try Row.fetchCursor(
                    db, sql: "SELECT name, ancestor FROM \(SyncState.record) WHERE entity = ?", arguments: [table.name])
                while let record = try records.next() {
                    let name: String = record[0]
                    known.insert(name)
                    let ancestor = try? CloudFieldsJSON.decode(record[1])
                    if !RecordApplier.same(rows[name]?.fields, ancestor) {
                        try work.markPending(db, entity: table.name, name: name, editedAt: now)
                    }
                }
                for name in rows.keys where !known.contains(name) {
                    try work.markPending(db, entity: table.name, name: name, editedAt: now)
                }
            }
        }
        state.record(.diffed)
        state.record(.gave(work))
    }
}
