import Foundation

/// Everything a ``SyncEngine`` knows between two syncs, as one value: what
/// is left to set up, why the next sync has work, and what it keeps of the
/// sync state so as not to read it again. The sync state in `store.sqlite`
/// stays the truth; each cache here names what makes it stale.
struct EngineState: Sendable {
    /// Steps an engine takes once, at its first sync (again after a failure).
    enum SetupStep: Hashable, CaseIterable {
        /// Changes the `sqlite3` shell committed that no member has closed
        /// yet become a transaction of the history.
        case closeShellChanges
        /// A one-shot sync (no saves stream): the history since the intake
        /// position is taken in.
        case takeInHistoryBacklog
        /// The remote's user is checked (a change of account handled).
        case checkAccount
        /// The synced tables are declared to the remote.
        case prepareRemote
        /// Shared zones an earlier configuration synced are left.
        case leaveStaleZones
        /// A table whose subscription changed gets only the difference
        /// (``SyncEngine/applySubscriptionChanges(summary:)``).
        case applySubscriptions
    }

    /// Why a sync has something to do. A sync fetches when it has a fetch
    /// reason and uploads when it has an upload reason; a sync with neither
    /// (a push hint that brought only this group's own echo) does nothing
    /// but count. Changed only by ``record(_:)``.
    enum Reason: Hashable, CaseIterable {
        /// A new engine: fetch every zone and upload once.
        case firstSync
        /// A push hint, the timer, a retry, ``CloudSync/triggerSync(complete:)``.
        case fetchAsked
        /// Tables are marked to be compared in full with their synced state.
        case tablesToDiff
        /// A transaction gave the upload work (``UploadWork``) since the last upload began.
        case keysMarked
        /// The last sync left keys pending, or did not finish counting them.
        case pendingLeft

        static let fetching: Set<Reason> = [.firstSync, .fetchAsked]
        static let uploading: Set<Reason> = [.firstSync, .tablesToDiff, .keysMarked, .pendingLeft]
    }

    /// What happened, as far as the reasons are concerned (``record(_:)``).
    enum Event {
        /// A sync was asked for; `fetch`: with a fetch (or complete).
        case syncAsked(fetch: Bool)
        /// A transaction committed and gave the upload `work`.
        case gave(UploadWork)
        /// An apply settled conflicts (their keys may stay pending, owed an upload).
        case settledConflicts
        /// Every zone was fetched.
        case fetched
        /// An upload pass began: what gives work from now on is a reason for the next one.
        case uploadBegan
        /// The upload needs the server's versions (a conflict to settle), or
        /// found the remote reset: fetch, then upload again.
        case uploadNeedsFetch
        /// The tables marked for a diff were compared.
        case diffed
        /// What the engine kept of the sync state was forgotten
        /// (``forgetCachedState()``): every table is compared, every zone fetched.
        case cachedStateForgotten
        /// A sync ended, counting `pending` keys left (`nil`: not counted) or failing.
        case syncEnded(pending: Int?, failed: Bool)
    }

    /// The one place the reasons change.
    mutating func record(_ event: Event) {
        switch event {
        case .syncAsked(let fetch):
            if fetch { reasons.insert(.fetchAsked) }
        case .gave(let work):
            if work.keys > 0 { reasons.insert(.keysMarked) }
            if work.tables > 0 { reasons.insert(.tablesToDiff) }
        case .settledConflicts:
            reasons.insert(.keysMarked)
        case .fetched:
            reasons.subtract(Reason.fetching)
        case .uploadBegan:
            reasons.subtract([.keysMarked, .pendingLeft])
        case .uploadNeedsFetch:
            reasons.formUnion([.fetchAsked, .pendingLeft])
        case .diffed:
            reasons.remove(.tablesToDiff)
        case .cachedStateForgotten:
            reasons.formUnion([.tablesToDiff, .fetchAsked])
        case .syncEnded(let pending, let failed):
            if !failed { reasons.remove(.firstSync) }
            if failed || pending != 0 { reasons.insert(.pendingLeft) } else { reasons.remove(.pendingLeft) }
        }
    }

    var setupLeft: Set<SetupStep>
    private(set) var reasons: Set<Reason> = [.firstSync, .tablesToDiff, .pendingLeft]
    /// The remote's user, once checked.
    var account: String?
    /// The last local save taken in (as stored with the keys it made pending).
    var intakePosition: Int64
    /// The history's latest change when an apply of the bridge's found
    /// nothing of others after the intake position (``intakePosition`` then):
    /// what follows the intake position through it is the bridge's own, so
    /// the next apply looks for others' changes after it only. Without it,
    /// each page of a download scanned every change the pages before it
    /// wrote. Valid while the intake position has not moved.
    var ownThrough: (intake: Int64, change: Int64)?

    /// Where an apply looks for changes of others not taken in yet.
    var checkedPosition: Int64 {
        guard let ownThrough, ownThrough.intake == intakePosition else { return intakePosition }
        return max(intakePosition, ownThrough.change)
    }
    /// The zones' change tokens (a zone not here: not read yet).
    var tokens: [CloudZone: Cached<CloudChangeToken?>] = [:]
    var echoes = EchoMemory()
    /// Whether records may be parked waiting for a parent (false once an
    /// apply found none).
    var orphansMayExist = true
    /// What `last_sync` holds, as this engine wrote it.
    var lastSync = LastSyncRecord()
    /// The last report of this host the remote took, and when (``SyncEngine/reportHost(_:)``).
    var reported: (report: CloudHostReport?, at: Date) = (nil, .distantPast)
    /// A sync is running (its uploads prepare their own batches).
    var syncing = false
    /// An upload batch prepared in the transaction that took local saves in
    /// (``SyncEngine/takeIn(_:)``), for the next upload to send as is; only
    /// while no sync runs, dropped when a fetch or a rewrite of the sync
    /// state comes first. The keys it names were recorded as sending.
    var prepared: (table: String, batch: SyncEngine.Batch)?
    /// A synced table's schema changed: the bridge maps the tables again.
    var tablesChanged = false
    /// The latest change of the remote's history this group saw (see
    /// ``CloudHistoryMark``; `nil`: none yet).
    var remoteSeen: Cached<CloudHistoryMark?> = .unknown
    /// When the remote was last found replaced or restored (`nil`: never;
    /// the engine is its only writer, ``SyncEngine/reset(_:seen:now:)``).
    var remoteResetAt: Cached<Date?> = .unknown
    /// The remote's clock less this host's, as measured by the last quick
    /// answer that gave it (``SyncEngine/take(_:askedAt:)``): local edit times
    /// are moved onto the remote's clock by it.
    var clockOffset: TimeInterval = 0
    /// The shortest round trip of an answer that gave the remote's clock,
    /// since this engine started or last found the remote reset.
    var shortestRoundTrip: TimeInterval = .infinity

    /// The values of the sync state that moved since they were stored
    /// (tokens moved past echoes, the remote's head), for the next write of
    /// the sync state to store.
    var moved: (tokens: [CloudZone: CloudChangeToken?], remoteSeen: CloudHistoryMark??) {
        (tokens.compactMapValues(\.movedValue), remoteSeen.movedValue)
    }

    /// The moved values as they were when read (``moved``) are stored now.
    mutating func stored(_ written: (tokens: [CloudZone: CloudChangeToken?], remoteSeen: CloudHistoryMark??)) {
        for (zone, token) in written.tokens { tokens[zone]?.stored(token) }
        if let seen = written.remoteSeen { remoteSeen.stored(seen) }
    }

    /// After a transaction that rewrote the sync state's tables (a change of
    /// account, a complete sync, a remote found replaced or restored; it
    /// stored what had moved first, ``SyncEngine/rewriteSyncState(throughStore:_:)``):
    /// everything kept of it is read again, and every table is compared.
    /// The one reset of the engine's cached state.
    mutating func forgetCachedState() {
        tokens = [:]
        remoteSeen = .unknown
        remoteResetAt = .unknown
        orphansMayExist = true
        lastSync.pending = nil
        prepared = nil
        record(.cachedStateForgotten)
    }

    init(oneShot: Bool, intakePosition: Int64) {
        setupLeft = Set(SetupStep.allCases)
        if !oneShot { setupLeft.remove(.takeInHistoryBacklog) }
        self.intakePosition = intakePosition
    }

    var mustFetch: Bool { !reasons.isDisjoint(with: Reason.fetching) }
    var mustUpload: Bool { !reasons.isDisjoint(with: Reason.uploading) }
}

/// A value of the sync state the engine keeps in memory, so as not to read
/// it again: `store.sqlite` stays the truth.
enum Cached<Value: Equatable & Sendable>: Equatable, Sendable {
    /// Not read since the engine started or last forgot it.
    case unknown
    /// As stored.
    case stored(Value)
    /// Moved since it was stored: the engine's next write of the sync state stores it.
    case moved(Value)

    var value: Value? {
        switch self {
        case .unknown: return nil
        case .stored(let value), .moved(let value): return value
        }
    }

    var movedValue: Value? {
        if case .moved(let value) = self { return value } else { return nil }
    }

    /// `value` was written: it is stored, unless it moved again meanwhile.
    mutating func stored(_ value: Value) {
        if case .moved(let current) = self, current == value { self = .stored(value) }
    }
}

/// The tags the remote gave this group's uploads since the last fetch of
/// every zone: a fetched record at one of them is an echo, known without
/// reading the sync state.
struct EchoMemory {
    /// The most tags kept; past it, echoes are recognised by reading the sync state.
    static let capacity = 4096
    var tags: [CloudRecordID: String] = [:]
    /// An upload was acknowledged since the last fetch of every zone (only
    /// then can a fetched page be this group's own echoes).
    var acknowledgedSinceFetch = false

    mutating func remember(_ record: CloudRecord) {
        acknowledgedSinceFetch = true
        if tags.count < Self.capacity { tags[record.id] = record.tag }
    }

    mutating func forget() { self = EchoMemory() }
}

/// The engine's last write of `last_sync`: it is written when something
/// moved, a failure began or ended, or a second passed.
struct LastSyncRecord {
    var writtenAt: Date?
    var failed = false
    /// Keys pending after the last sync that failed nothing (`nil`: not known).
    var pending: Int?
    /// What an acknowledgement of the sync in progress wrote (with the
    /// pending count it read), until the engine's next write: the sync's end
    /// writes nothing more when nothing was written after it and the counts
    /// are the same (``SyncEngine/recordLastSync(_:failed:idle:)``).
    var acknowledged: CloudSyncSummary?

    func isDue(moved: Bool, failed: Bool, now: Date) -> Bool {
        moved || failed || failed != self.failed || (writtenAt.map { now.timeIntervalSince($0) >= 1 } ?? true)
    }
}
