import Foundation
import GRDB
import GroupStore
import Logging

/// The syncing member's work, one sync at a time: take local changes in
/// from the history, fetch and apply the remote's, upload what is pending.
///
/// Runs on an actor whose executor is a dispatch queue of its own
/// (``EngineQueue``): its database work uses GRDB's synchronous API there,
/// without a thread hand-off per transaction, and never blocks the Swift
/// concurrency pool.
actor SyncEngine {
    /// The engine's own thread.
    nonisolated let executor: EngineQueue
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let store: GroupStore
    let remote: any CloudDatabase
    /// The remote, when its calls can run on the engine's own thread
    /// (``BlockingCloudDatabase``: the embedded remote).
    let blockingRemote: (any BlockingCloudDatabase)?
    let configuration: CloudSyncConfiguration
    let tables: [MappedTable]
    let applier: RecordApplier
    /// The remote's user, checked at the first sync.
    private(set) var account: String?
    let events: EventHub
    let tracer: SyncTracer
    let logger: Logger
    private var prepared = false
    /// Close the shell's unclosed changes into a transaction before every
    /// sync (a one-shot sync), or only before the first (a running bridge,
    /// whose store's merger closes them as it notices them).
    private let sealEveryCycle: Bool
    private var sealed = false
    private var lastSyncWritten: Date?
    private var lastSyncFailed = false
    /// A synced table's schema changed: the tables must be mapped again.
    var needsRemap = false
    var intakeWaiters: [(Int64, CheckedContinuation<Void, Never>)] = []
    /// The intake position: the stored one, or ahead of it by pages of the
    /// bridge's own transactions, stored with the next write (the engine
    /// is its only writer).
    var intakePosition: Int64 = 0
    /// Whether the intake has run on its own since the engine started.
    var caughtUp = false
    /// The bridge is stopping: nothing waits for the intake any more.
    var waitersReleased = false
    let historyIntake: HistoryIntake
    /// Whether a table may be marked for a diff (the engine marks them
    /// itself; false once ``runDiffs()`` found none).
    var diffsMayBePending = true
    /// Whether a fetch of every zone has succeeded (the first sync always fetches).
    private var fetchedOnce = false
    /// The zones' change tokens as last stored (the engine is the only
    /// writer of the tokens): nil until read, or after a complete sync or
    /// a change of account cleared them.
    var knownTokens: [CloudZone: CloudChangeToken?] = [:]
    /// Tokens moved past echoes only, not stored yet (stored with the next
    /// apply or `last_sync`).
    var unsavedTokens: [CloudZone: CloudChangeToken] = [:]
    /// Whether records may be parked waiting for a parent (false once an
    /// apply found none).
    var orphansMayExist = true
    /// Whether an upload was acknowledged since the last fetch of every
    /// zone (only then can a fetched page be this group's own echoes).
    var acknowledgedSinceFetch = false
    /// The tags the remote gave this group's uploads since the last fetch of
    /// every zone: a fetched record at one of them is an echo, known without
    /// reading the sync state.
    var acknowledgedTags: [CloudRecordID: String] = [:]
    /// What was pending at the end of the last sync that failed nothing
    /// (`nil`: not known). Only this engine adds pending keys, in syncs.
    var pendingAfterLastSync: Int?
    /// Whether this engine has left the shared zones its group synced before
    /// and no longer does (they come only from an earlier configuration).
    var leftStaleZones = false

    static let fetchPageSize = 400
    /// The most acknowledged tags kept in memory to recognise echoes.
    static let maxKnownEchoes = 4096
    static let maxBatchRecords = 400
    /// Below the 2 MB a remote takes at once (sizes are estimates).
    static let maxBatchBytes = 1_800_000

    var pool: DatabasePool { store.pool }

    /// Maps the tables (refusing those that cannot be synced), creates the
    /// sync state, and handles a change of account.
    static func make(
        store: GroupStore, configuration: CloudSyncConfiguration, events: EventHub, tracer: SyncTracer, sealEveryCycle: Bool = true
    ) async throws -> SyncEngine {
        if !configuration.sharedTables.isEmpty {
            guard let zone = configuration.sharedZone, zone.scope == .shared, CloudZone.isOwnerName(zone.owner), CloudZone.isZoneName(zone.name) else {
                throw CloudSyncError(
                    .invalidConfiguration,
                    "shared tables \(configuration.sharedTables.joined(separator: ", ")) need a shared zone (owner/name, the name 1 to 63 of A-Z a-z 0-9 . _ -)")
            }
        }
        let request = SchemaMapper.Request(
            privateTables: configuration.privateTables, publicTables: configuration.publicTables,
            sharedTables: configuration.sharedTables, assetColumns: configuration.assetColumns)
        let path = store.directoryPath + "/store.sqlite"
        let (tables, triggered) = try await store.pool.read { db -> ([MappedTable], Set<String>) in
            let tables = try SchemaMapper.map(request, in: db, path: path)
            var triggered = Set<String>()
            for table in tables {
                let count = try Int.fetchOne(
                    db,
                    sql: "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name NOT LIKE 'groupstore\\_%' ESCAPE '\\'",
                    arguments: [table.name]) ?? 0
                if count > 0 { triggered.insert(table.name.lowercased()) }
            }
            return (tables, triggered)
        }
        let codecs = Dictionary(
            uniqueKeysWithValues: tables.map { ($0.name.lowercased(), RowCodec(table: $0, assetThreshold: configuration.assetThreshold)) })
        let applier = RecordApplier(tables: tables, codecs: codecs, policy: configuration.policy, triggered: triggered)
        let engine = SyncEngine(
            store: store, configuration: configuration, tables: tables, applier: applier, events: events, tracer: tracer,
            sealEveryCycle: sealEveryCycle)
        try await engine.prepareState()
        return engine
    }

    private init(
        store: GroupStore, configuration: CloudSyncConfiguration, tables: [MappedTable], applier: RecordApplier, events: EventHub,
        tracer: SyncTracer, sealEveryCycle: Bool
    ) {
        self.tracer = tracer
        executor = EngineQueue(label: "GroupStoreCloud.SyncEngine.\(store.member)")
        historyIntake = HistoryIntake(
            member: store.member.rawValue, store: store, applier: applier, tables: tables, logger: configuration.logger)
        self.sealEveryCycle = sealEveryCycle
        self.store = store
        self.remote = configuration.remote
        blockingRemote = configuration.remote as? any BlockingCloudDatabase
        self.configuration = configuration
        self.tables = tables
        self.applier = applier
        self.events = events
        self.logger = configuration.logger
    }

    func zone(of table: MappedTable) -> CloudZone {
        switch table.scope {
        case .public: return .public
        case .private: return .private(account ?? "")
        // Checked in `make`: shared tables come with a shared zone.
        case .shared: return configuration.sharedZone!
        }
    }

    /// How a table is known in the sync state: its name, its scope (and
    /// shared zone) and its columns; a table whose entry changed is
    /// compared in full again.
    private func stateEntry(_ table: MappedTable) -> String {
        let scope = table.scope == .shared ? zone(of: table).description : table.scope.rawValue
        return ([table.name.lowercased(), scope] + table.columns.map(\.name)).joined(separator: "\t")
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
        let changed = try writeStore { db -> Bool in
            let known = String.fromDatabaseValue(try SyncState.value(db, "account"))
            if let known, known != account {
                switch accountChange {
                case .refuse:
                    throw CloudSyncError(
                        .accountChanged,
                        "group \(group) syncs as \(known), not \(account): nothing was synced (choose purge or upload for a change of user)")
                case .purge:
                    // The deletions are this member's own: they are not taken in, so not uploaded.
                    for table in tables.reversed() { try db.execute(sql: "DELETE FROM \(quote(table.name))") }
                    for name in [SyncState.record, SyncState.pending, SyncState.parked, SyncState.zone, SyncState.diff] {
                        try db.execute(sql: "DELETE FROM \(name)")
                    }
                case .upload:
                    for name in [SyncState.record, SyncState.pending, SyncState.parked, SyncState.zone, SyncState.diff] {
                        try db.execute(sql: "DELETE FROM \(name)")
                    }
                    for table in tables { try SyncState.markForDiff(db, entity: table.name) }
                }
            }
            try SyncState.setValue(db, "account", account)
            return known != nil && known != account
        }
        if changed {
            logger.info("account changed", metadata: ["account": "\(account)", "action": "\(accountChange.rawValue)"])
            forgetCachedState()
        }
        self.account = account
    }

    /// After a transaction that rewrote the sync state's tables (a change
    /// of account, a complete sync): what the engine kept of them is read
    /// again.
    private func forgetCachedState() {
        diffsMayBePending = true
        knownTokens = [:]
        unsavedTokens = [:]
        orphansMayExist = true
    }

    /// Creates the state tables; on the first sync of a table, marks it to
    /// be diffed (its rows were written before sync was on).
    private func prepareState() async throws {
        let tables = self.tables
        // Name, scope and columns: a table whose columns changed since is compared in full again.
        let entries = tables.map { stateEntry($0) }
        let configured = entries.sorted().joined(separator: "\n")
        try writeStore { db in
            try SyncState.create(db)
            // Tables synced for the first time (or under a new scope) are diffed in full.
            let known = String.fromDatabaseValue(try SyncState.value(db, "tables"))
            let previous = Set((known ?? "").split(separator: "\n").map(String.init))
            for (table, entry) in zip(tables, entries) where !previous.contains(entry) {
                try SyncState.markForDiff(db, entity: table.name)
            }
            if known == nil {
                // First start: what is in the tables now is covered by the diff.
                let head = try Int64.fetchOne(db, sql: "SELECT seq FROM groupstore_transaction ORDER BY seq DESC LIMIT 1") ?? 0
                try SyncState.setValue(db, "intake_seq", head)
            }
            try SyncState.setValue(db, "tables", configured)
        }
        intakePosition = try readDatabase { try SyncState.intakeSeq($0) }
    }

    // MARK: one sync

    /// One full sync: diffs, fetch every zone, upload everything pending
    /// (the history is taken in by the apply and the first upload, each in
    /// its own transaction). Without `fetch` (woken by local saves only) the
    /// fetch comes only when an upload needs it, except at the engine's
    /// first sync and in a complete one.
    func sync(complete: Bool, fetch: Bool = true) async -> CloudSyncSummary {
        tracer.mark(.syncStarted)
        var summary = CloudSyncSummary(startedAt: Date(), finishedAt: Date())
        events.emit(.started(complete: complete))
        var failure: CloudSyncError?
        // Nothing moved and nothing could have: the pending count is the last one.
        var quiet = false
        let pendingBefore = pendingAfterLastSync
        pendingAfterLastSync = nil
        // What this sync takes in itself (a backlog, diffs, the history an
        // apply takes in) is work: a sync that did any is not quiet.
        let intakeAtStart = intakePosition
        let diffsAtStart = diffsMayBePending
        do {
            // Changes the shell committed that no member has closed yet become a transaction first.
            if sealEveryCycle || !sealed {
                try writeStore { _ in }
                sealed = true
            }
            // New local history is taken in inside the transactions that need it complete
            // (an apply of fetched changes, the first upload batch), not in one of its own;
            // but a backlog (at the engine's start, or a burst of saves) is taken in first,
            // a page per transaction, so those transactions hold the write lock briefly
            // (the bridge's member has read the history through its cursor).
            if !caughtUp || store.cursor - intakePosition > Int64(HistoryIntake.pageSize) {
                try await intake()
                caughtUp = true
            }
            try await runDiffs()
            if account == nil {
                try await checkAccount()
                try await runDiffs()
            }
            if !prepared {
                let types = tables.map(\.recordType)
                try await Retry.run(configuration, "prepare the tables on \(remote.displayName)") { try await self.remote.prepare(types) }
                prepared = true
            }
            if complete {
                let tables = self.tables
                try writeDatabase { db in
                    try db.execute(sql: "DELETE FROM \(SyncState.zone)")
                    for table in tables { try SyncState.markForDiff(db, entity: table.name) }
                    // Parked uploads get another chance.
                    try db.execute(sql: "DELETE FROM \(SyncState.parked) WHERE direction = 'up'")
                    try db.execute(sql: "UPDATE \(SyncState.pending) SET rounds = 0")
                }
                forgetCachedState()
                try await runDiffs()
            }
            // Fetch first (uploads then carry fresh tags); again when a conflict needs the server's version.
            var passes = 0
            var fetchNow = fetch || complete || !fetchedOnce
            while true {
                var fetched = 0
                if fetchNow {
                    fetched = try await fetchAll(summary: &summary)
                    summary.fetched += fetched
                    fetchedOnce = true
                }
                // A sync woken by a hint that brought nothing (this group's own upload coming
                // back, say) uploads nothing either when nothing was pending after the last sync
                // and no local transaction has come since: only this engine adds pending keys,
                // in its intake, diffs and applies, and none of them had anything to do, in
                // this sync either (a backlog taken in above moved the intake position).
                if passes == 0 && fetched == 0 && !complete && pendingBefore == 0 && !diffsMayBePending && !diffsAtStart
                    && intakePosition == intakeAtStart && store.cursor <= intakePosition
                {
                    quiet = true
                    break
                }
                var (accepted, refetch) = try await uploadAll(summary: &summary, intakeFirst: passes == 0)
                fetchNow = true
                passes += 1
                // That intake found the history pruned or a table reset: compare and upload now.
                if diffsMayBePending {
                    try await runDiffs()
                    let more = try await uploadAll(summary: &summary)
                    accepted += more.accepted
                    refetch = refetch || more.refetch
                }
                summary.uploaded += accepted
                if !refetch || passes > configuration.maxConflictRounds { break }
            }
        } catch {
            // What waits to go up is counted even when the remote failed.
            try? await intake()
            failure = CloudSyncError.wrap(error, "sync with \(remote.displayName)")
            summary.error = failure?.message
            summary.errorCode = failure?.code.rawValue
            logger.info("sync failed", metadata: ["error": "\(failure?.message ?? "")"])
        }
        summary.finishedAt = Date()
        // The last sync is recorded when something happened, a failure began
        // or ended, or a second has passed (a bridge idling on push hints
        // does not write every time), with the count of what is pending.
        let moved = summary.uploaded + summary.fetched + summary.conflicts + summary.parked > 0
        let failed = summary.error != nil
        var recorded = false
        if moved || failed || failed != lastSyncFailed || (lastSyncWritten.map { Date().timeIntervalSince($0) >= 1 } ?? true) {
            let finished = summary
            let unsaved = unsavedTokens
            let position = intakePosition
            if let pending = try? writeDatabase({ db -> Int in
                var last = finished
                last.pending = try SyncState.pendingCount(db)
                try SyncState.setValue(db, "last_sync", last.stateJSON)
                for (zone, token) in unsaved { try SyncState.setToken(db, zone: zone, token) }
                // The position as taken in (a page of the bridge's own transactions may not be stored yet).
                if position > (try SyncState.intakeSeq(db)) { try SyncState.setValue(db, "intake_seq", position) }
                return last.pending
            }) {
                for (zone, token) in unsaved where unsavedTokens[zone] == token { unsavedTokens[zone] = nil }
                summary.pending = pending
                lastSyncWritten = Date()
                lastSyncFailed = failed
                recorded = true
                if !failed { pendingAfterLastSync = pending }
            }
        }
        if !recorded {
            if quiet, failure == nil, let pendingBefore {
                summary.pending = pendingBefore
                pendingAfterLastSync = pendingBefore
            } else if let pending = try? readDatabase({ try SyncState.pendingCount($0) }) {
                summary.pending = pending
                if failure == nil { pendingAfterLastSync = pending }
            }
        }
        events.emit(.finished(summary), error: failure)
        return summary
    }

    /// Compares the tables marked for a diff with their last acknowledged
    /// versions and marks every difference pending.
    func runDiffs() async throws {
        guard diffsMayBePending else { return }
        let entities = try readDatabase { try String.fetchAll($0, sql: "SELECT entity FROM \(SyncState.diff)") }
        for entity in entities {
            let applier = self.applier
            try writeDatabase { db in
                defer { _ = try? db.execute(sql: "DELETE FROM \(SyncState.diff) WHERE entity = ?", arguments: [entity]) }
                guard let table = applier.table(named: entity) else { return }
                let rows = try applier.codec(table).readAll(in: db)
                var known: Set<String> = []
                let now = Date()
                let records = try Row.fetchCursor(db, sql: "SELECT name, ancestor FROM \(SyncState.record) WHERE entity = ?", arguments: [table.name])
                while let record = try records.next() {
                    let name: String = record[0]
                    known.insert(name)
                    let ancestor = try? CloudFieldsJSON.decode(record[1])
                    if !RecordApplier.same(rows[name]?.fields, ancestor) {
                        try SyncState.addPending(db, entity: table.name, name: name, editedAt: now)
                    }
                }
                for name in rows.keys where !known.contains(name) {
                    try SyncState.addPending(db, entity: table.name, name: name, editedAt: now)
                }
            }
        }
        diffsMayBePending = false
    }
}
