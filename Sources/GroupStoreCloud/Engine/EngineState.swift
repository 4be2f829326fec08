import Foundation

/// Everything a ``SyncEngine`` knows between two syncs, as one value: what
/// is left to set up, why the next sync has work, and what it keeps of the
/// sync state so as not to read it again. The sync state in `store.sqlite`
/// stays the truth; each cache here names what makes it stale.
struct EngineState {
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
    }

    /// Why a sync has something to do. A sync fetches when it has a fetch
    /// reason and uploads when it has an upload reason; a sync with neither
    /// (a push hint that brought only this group's own echo) does nothing
    /// but count.
    enum Reason: Hashable, CaseIterable {
        /// A new engine: fetch every zone and upload once.
        case firstSync
        /// A push hint, the timer, a retry, ``CloudSync/triggerSync(complete:)``.
        case fetchAsked
        /// Local saves were taken in since the last upload began.
        case savesTakenIn
        /// Tables are marked to be compared in full with their synced state.
        case tablesToDiff
        /// An apply or a diff marked keys pending since the last upload began.
        case keysMarked
        /// The last sync left keys pending, or did not finish counting them.
        case pendingLeft

        static let fetching: Set<Reason> = [.firstSync, .fetchAsked]
        static let uploading: Set<Reason> = [.firstSync, .savesTakenIn, .tablesToDiff, .keysMarked, .pendingLeft]
    }

    var setupLeft: Set<SetupStep>
    var reasons: Set<Reason> = [.firstSync, .tablesToDiff, .pendingLeft]
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
    var tokens = TokenCache()
    var echoes = EchoMemory()
    /// Whether records may be parked waiting for a parent (false once an
    /// apply found none).
    var orphansMayExist = true
    /// What `last_sync` holds, as this engine wrote it.
    var lastSync = LastSyncRecord()
    /// A synced table's schema changed: the bridge maps the tables again.
    var tablesChanged = false
    /// The latest change of the remote's history this group saw (see
    /// ``CloudHistoryMark``), and whether it was read from the sync state.
    var remoteSeen: CloudHistoryMark?
    var remoteSeenLoaded = false
    /// Whether ``remoteSeen`` moved since it was last stored.
    var remoteSeenUnsaved = false
    /// When the remote was last found replaced or restored (`nil`: never),
    /// and whether it was read from the sync state (the engine is its only
    /// writer, ``SyncEngine/reset(_:seen:now:)``).
    var remoteResetAt: Date?
    var remoteResetLoaded = false
    /// The remote's clock less this host's, as measured by the last quick
    /// answer that gave it (``SyncEngine/take(_:askedAt:)``): local edit times
    /// are moved onto the remote's clock by it.
    var clockOffset: TimeInterval = 0
    /// The shortest round trip of an answer that gave the remote's clock,
    /// since this engine started or last found the remote reset.
    var shortestRoundTrip: TimeInterval = .infinity

    init(oneShot: Bool, intakePosition: Int64) {
        setupLeft = Set(SetupStep.allCases)
        if !oneShot { setupLeft.remove(.takeInHistoryBacklog) }
        self.intakePosition = intakePosition
    }

    var mustFetch: Bool { !reasons.isDisjoint(with: Reason.fetching) }
    var mustUpload: Bool { !reasons.isDisjoint(with: Reason.uploading) }
}

/// The zones' change tokens as last stored (the engine is their only
/// writer), and tokens moved past echoes only, stored with the next write.
struct TokenCache {
    /// `nil` until read, or after a transaction that rewrote them.
    var known: [CloudZone: CloudChangeToken?] = [:]
    var unsaved: [CloudZone: CloudChangeToken] = [:]
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

    func isDue(moved: Bool, failed: Bool, now: Date) -> Bool {
        moved || failed || failed != self.failed || (writtenAt.map { now.timeIntervalSince($0) >= 1 } ?? true)
    }
}
