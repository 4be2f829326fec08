import Foundation
import GRDB
import GroupStore
import Logging

/// The syncing member's work, one sync at a time: take local saves in,
/// fetch and apply the remote's changes, upload what is pending.
///
/// Runs on an actor whose executor is a dispatch queue of its own
/// (``EngineQueue``): its database work uses GRDB's synchronous API there,
/// without a thread hand-off per transaction, and never blocks the Swift
/// concurrency pool. Its remote calls are `async` (there is no other kind).
///
/// Everything it knows between syncs is one value, ``state``; each sync
/// reads there why it has work (``EngineState/Reason``) and returns what it
/// did (``SyncEngine/Result``).
actor SyncEngine {
    /// The engine's own thread.
    nonisolated let executor: EngineQueue
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let store: GroupStore
    let remote: any CloudDatabase
    let configuration: CloudSyncConfiguration
    let tables: [MappedTable]
    let applier: RecordApplier
    /// What this group subscribes to (``CloudSyncConfiguration/subscriptions``, checked).
    let subscription: CloudSubscription
    let intake: SaveIntake
    let events: EventHub
    let tracer: SyncTracer
    let logger: Logger
    /// The one mutable stored property.
    var state: EngineState

    static let fetchPageSize = 400
    static let maxBatchRecords = 400
    /// Below the 2 MB a remote takes at once (sizes are estimates).
    static let maxBatchBytes = 1_800_000

    var pool: DatabasePool { store.pool }

    /// What one sync did, and whether the bridge must map the tables again.
    struct Result: Sendable {
        var summary: CloudSyncSummary
        /// A synced table's schema changed: make a new engine.
        var tablesChanged: Bool
    }

    /// Maps the tables (refusing those that cannot be synced) and creates or
    /// upgrades the sync state. `oneShot`: the store is not started, so the
    /// engine reads the history itself (``HistoryBacklog``).
    static func make(
        store: GroupStore, configuration: CloudSyncConfiguration, events: EventHub, tracer: SyncTracer, oneShot: Bool
    ) async throws -> SyncEngine {
        if !configuration.sharedTables.isEmpty {
            guard let zone = configuration.sharedZone, zone.scope == .shared, CloudZone.isOwnerName(zone.owner),
                CloudZone.isZoneName(zone.name)
            else {
                throw CloudSyncError(
                    .invalidConfiguration,
                    "shared tables \(configuration.sharedTables.joined(separator: ", ")) need a shared zone (owner/name, the name 1 to 63 of A-Z a-z 0-9 . _ -)"
                )
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
                let count =
                    try Int.fetchOne(
                        db,
                        sql:
                            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name NOT LIKE 'groupstore\\_%' ESCAPE '\\'",
                        arguments: [table.name]) ?? 0
                if count > 0 { triggered.insert(table.name.lowercased()) }
            }
            return (tables, triggered)
        }
        let codecs = Dictionary(
            uniqueKeysWithValues: tables.map { ($0.name.lowercased(), RowCodec(table: $0, assetThreshold: configuration.assetThreshold)) })
        let clock = { @Sendable [configuration] in configuration.clock() }
        let applier = RecordApplier(tables: tables, codecs: codecs, policy: configuration.policy, triggered: triggered, clock: clock)
        let subscription = try Self.subscription(configuration, tables: tables)
        let position = try await SyncStateSetup(tables: tables, zone: { Self.zone(of: $0, account: nil, configuration) }).prepare(store)
        return SyncEngine(
            store: store, configuration: configuration, tables: tables, applier: applier, subscription: subscription, events: events,
            tracer: tracer, state: EngineState(oneShot: oneShot, intakePosition: position))
    }

    private init(
        store: GroupStore, configuration: CloudSyncConfiguration, tables: [MappedTable], applier: RecordApplier,
        subscription: CloudSubscription, events: EventHub, tracer: SyncTracer, state: EngineState
    ) {
        self.subscription = subscription
        self.tracer = tracer
        executor = EngineQueue(label: "GroupStoreCloud.SyncEngine.\(store.member)")
        intake = SaveIntake(
            member: store.member.rawValue, applier: applier, tables: tables, logger: configuration.logger,
            clockSkew: configuration.clockSkew)
        self.store = store
        self.remote = configuration.remote
        self.configuration = configuration
        self.tables = tables
        self.applier = applier
        self.events = events
        self.logger = configuration.logger
        self.state = state
    }

    /// The zone `table` syncs with, for `account`.
    static func zone(of table: MappedTable, account: String?, _ configuration: CloudSyncConfiguration) -> CloudZone {
        switch table.scope {
        case .public: return .public
        case .private: return .private(account ?? "")
        // Checked in `make`: shared tables come with a shared zone.
        case .shared: return configuration.sharedZone!
        }
    }

    func zone(of table: MappedTable) -> CloudZone {
        Self.zone(of: table, account: state.account, configuration)
    }

    /// The zones of the synced tables.
    var zones: [CloudZone] {
        var zones: [CloudZone] = []
        for table in tables where !zones.contains(zone(of: table)) { zones.append(zone(of: table)) }
        return zones
    }

    // MARK: one sync

    /// One sync: the setup steps left, then a fetch if there is a reason to
    /// fetch (or `complete`), then uploads while there is a reason to
    /// upload, again after a conflict that needs the server's version.
    func sync(complete: Bool, fetch: Bool = true) async -> Result {
        // A synced table's schema changed since the tables were mapped: the
        // bridge maps them again first (a sync now would use the old columns).
        if state.tablesChanged {
            return Result(summary: CloudSyncSummary(startedAt: Date(), finishedAt: Date()), tablesChanged: true)
        }
        tracer.mark(.syncStarted)
        state.syncing = true
        defer { state.syncing = false }
        state.record(.syncAsked(fetch: fetch || complete))
        var summary = CloudSyncSummary(startedAt: Date(), finishedAt: Date())
        events.emit(.started(complete: complete))
        var failure: CloudSyncError?
        var passes = 0
        do {
            try await setUp()
            if state.setupLeft.contains(.applySubscriptions) { try await applySubscriptionChanges(summary: &summary) }
            if complete { try startCompleteSync() }
            try runDiffs()
            while true {
                if state.mustFetch {
                    summary.fetched += try await fetchAll(summary: &summary)
                    state.record(.fetched)
                }
                guard state.mustUpload else { break }
                let (accepted, refetch, remoteReset) = try await uploadAll(summary: &summary)
                summary.uploaded += accepted
                passes += 1
                if remoteReset {
                    // Found while uploading: prepared again and listed, as before any sync.
                    try await setUp()
                    state.record(.uploadNeedsFetch)
                    guard passes <= configuration.maxConflictRounds else { break }
                    continue
                }
                // The pass gave more work (a save taken in meanwhile, what an acknowledgement caused):
                // another pass, as for a conflict that needs the server's version fetched first.
                guard refetch || state.reasons.contains(.keysMarked), passes <= configuration.maxConflictRounds else { break }
                if refetch { state.record(.uploadNeedsFetch) }
            }
        } catch let error as DatabaseError {
            // The group's own database failed, not the remote.
            failure = CloudSyncError(
                .store, "the local database of group \(configuration.group) failed: \(error.message ?? "\(error.resultCode)")",
                underlying: error)
            summary.error = failure?.message
            summary.errorCode = failure?.code.rawValue
            logger.info("sync failed", metadata: ["error": "\(failure?.message ?? "")"])
        } catch {
            failure = CloudSyncError.wrap(error, "sync with \(remote.displayName)")
            summary.error = failure?.message
            summary.errorCode = failure?.code.rawValue
            logger.info("sync failed", metadata: ["error": "\(failure?.message ?? "")"])
        }
        summary.finishedAt = Date()
        recordLastSync(&summary, failed: failure != nil, idle: passes == 0 && summary.fetched == 0)
        await reportHost(summary)
        events.emit(.finished(summary), error: failure)
        return Result(summary: summary, tablesChanged: state.tablesChanged)
    }
}
