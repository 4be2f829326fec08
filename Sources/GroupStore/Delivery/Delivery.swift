import Dispatch
import FolderWatching
import Foundation
import GRDB
import Logging
import Synchronization

/// Brings the group's commits to this member: the one owner of the watch, the
/// merger and the cursor, and the one place that decides what a wake-up leads
/// to.
///
/// ```
///  FolderWatcher events ─▶ GroupWatch.interpret ─▶ WatchReport ─┐
///  timers (rechecks, the safety tick) ────────────────────────┤
///  this process's commits, noted (ownCommit), passed at the next merge
///                                                             ▼
///                                   Delivery ── Merger.read ─▶ MergeOutcome
///                                      │ hands over: SaveFeed (streams), synchronous handler,
///                                      │             SaveNotifier (.groupStoreDidSave)
///                                      │ then: ObserverRefresh (GRDB observers)
///                                      └ moves: CursorKeeper ─▶ members/<me>/cursor
/// ```
///
/// Children return values and the owner acts on them: no child reads another's
/// state or calls back into its owner. Everything runs on `queue`, so events,
/// merges, timers, start and stop are serialised.
///
/// `@unchecked Sendable`: every `var` is touched on `queue` only (each entry
/// point hops there: `start`, `stop` and `flushCursor` with `sync`, or run
/// directly when already on it; events and timers are delivered there;
/// `ownCommit` only notes, in a `Mutex`); the `let`s are `Sendable` or confined the same way
/// (`watch`), and the values read from other threads are in `Mutex`es.
final class Delivery: @unchecked Sendable {
    struct Settings: Sendable {
        var cursorFlushInterval: TimeInterval
        var synchronousDelivery: (@Sendable (Save) -> Void)?
    }

    /// Batches read in one go before yielding the queue to pending events.
    static let roundsPerWake = 64
    static let safetyInterval: TimeInterval = 1.0
    /// Under load (a merge that read more than one transaction), events are
    /// read at most once per this interval, so a follower costs one merge per
    /// interval rather than one per commit.
    static let coalesceInterval: TimeInterval = 0.001
    /// How long a member that is not first among the live members leaves an
    /// outside writer's changes for the first to close, before it closes
    /// them itself.
    static let closeFallbackDelay: TimeInterval = 0.002

    /// `stopped`: no more merging, but the member's lock is held, so the
    /// cursor may still be written (``flushCursorAfterStop()``); `closed`:
    /// nothing is written any more.
    private enum Phase { case idle, running, stopped, closed }

    let queue: DispatchQueue
    private let onQueueKey = DispatchSpecificKey<Bool>()
    private let pool: DatabasePool
    private let settings: Settings
    let folder: MemberFolder
    private let feed: SaveFeed
    private let notifier: SaveNotifier
    let metrics: GroupMetrics
    private let logger: Logger
    private let watch: GroupWatch

    // Confined to `queue`.
    private var merger: Merger
    private var keeper: CursorKeeper
    private var observers: ObserverRefresh
    private var rechecks = RecheckSchedule()
    private var health = DeliveryHealth()
    private var phase = Phase.idle
    private var safetyTimer: (any DispatchSourceTimer)?
    private var cursorFlushScheduled = false
    /// The first wake-up since the last delivery: what woke this member for
    /// the saves the next delivery hands over (for the trace).
    private var firstWake: (kind: DeliveryTrace.Wake, at: Double)?

    /// The merger's cursor, readable from any thread without waiting.
    let publicCursor: Mutex<Int64>
    /// This process's commits through the library (see ``OwnCommits`` for the rule).
    private let ownCommits = OwnCommits()
    private let departure = Mutex<GroupStoreError?>(nil)
    /// Told when each save passed each stage (the benchmark's breakdown).
    let tracer = Mutex<(@Sendable (DeliveryTrace) -> Void)?>(nil)

    init(
        pool: DatabasePool, merger: Merger, start: Merger.Start, persistsCursor: Bool, observers: ObserverRefresh, settings: Settings,
        folder: MemberFolder, feed: SaveFeed, notifier: SaveNotifier, metrics: GroupMetrics, logger: Logger
    ) {
        self.observers = observers
        queue = DispatchQueue(label: "GroupStore.Delivery.\(merger.settings.member)")
        queue.setSpecific(key: onQueueKey, value: true)
        self.pool = pool
        self.merger = merger
        keeper = CursorKeeper(start: start, persists: persistsCursor)
        publicCursor = Mutex(merger.cursor)
        self.settings = settings
        self.folder = folder
        self.feed = feed
        self.notifier = notifier
        self.metrics = metrics
        self.logger = logger
        watch = GroupWatch(directory: folder.directory, member: merger.settings.member, logger: logger)
    }

    private var member: MemberName { merger.settings.member }

    /// Runs `body` on `queue`: directly when already there (a synchronous
    /// delivery handler may start or close the store), else waiting for it.
    private func onQueue<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if DispatchQueue.getSpecific(key: onQueueKey) == true { return try body() }
        let result = queue.sync { () -> Result<T, E> in
            do throws(E) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    // MARK: - Entry points

    /// Starts watching, then merges once (catching up on what happened while
    /// down). Idempotent; after a failure, it may be called again.
    func start() throws(FolderWatcherError) {
        try onQueue { () throws(FolderWatcherError) in
            guard phase == .idle else { return }
            do throws(FolderWatcherError) {
                try watch.start(queue: queue) { [weak self] events in self?.handle(events) }
            } catch {
                watch.stop()
                throw error
            }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + Self.safetyInterval, repeating: Self.safetyInterval, leeway: .milliseconds(100))
            timer.setEventHandler { [weak self] in self?.safetyTick() }
            timer.activate()
            safetyTimer = timer
            phase = .running
            queue.async { _ = self.merge(wake: .timer) }
        }
    }

    /// Stops watching and merging, and writes the cursor. Idempotent.
    func stop() {
        onQueue {
            guard phase != .closed else { return }
            halt()
        }
    }

    /// ``stop()``, and writes nothing after (the member's lock is released next).
    func close() {
        onQueue {
            if phase != .closed { halt() }
            phase = .closed
        }
    }

    /// Writes the cursor if subscribers processed more since delivery stopped.
    func flushCursorAfterStop() {
        onQueue {
            guard phase == .stopped else { return }
            writeCursor()
        }
    }

    /// Why this member left the group, if it did.
    var departureError: GroupStoreError? { departure.withLock { $0 } }

    /// This process committed `payload`'s transaction (any thread). The
    /// commit's own `-wal` wake-up (or the next one) finds it noted here:
    /// when nothing else was committed since this member's last read, its
    /// cursor moves past it without reading it back.
    func ownCommit(_ payload: Payload) {
        ownCommits.note(payload)
    }

    /// Moves the cursor past this process's commits noted since the last
    /// merge that follow it directly (``OwnCommits/pass(from:)``).
    private func passOwnCommits() {
        guard merger.passesOwnCommits else { return }
        let passed = ownCommits.pass(from: merger.cursor)
        guard let last = passed.last else { return }
        for payload in passed { keeper.merged(seq: payload.seq, committedAt: payload.save.committedAt) }
        merger.passedOwnCommits(through: last.seq)
        publicCursor.withLock { $0 = last.seq }
        feed.append([], merged: last.seq)
        scheduleCursorFlush()
    }

    /// Writes the cursor if it moved: as far as every subscriber has processed.
    func flushCursor() {
        onQueue { writeCursor() }
    }

    /// Stopped, with no timer left to fire. On `queue` (for tests).
    var isStopped: Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        return (phase == .stopped || phase == .closed) && safetyTimer == nil
    }

    /// The merger as it stands (a copy). On `queue` (for tests).
    var mergerForTests: Merger {
        dispatchPrecondition(condition: .onQueue(queue))
        return merger
    }

    /// Nothing is pending: no coalescing pause, no recheck, no wake-up kept
    /// for the trace. On `queue` (for tests).
    var isIdle: Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        return !watch.isCoalescing && rechecks.isEmpty && firstWake == nil
    }

    // MARK: - Wake-ups

    private func handle(_ events: [FolderWatcher.Event]) {
        let report = watch.interpret(events, cursor: merger.cursor)
        if report.overflowed { metrics.overflowed() }
        if let reason = report.departure { return leave(reason) }
        if report.ownFolderRemoved { repairOwnFolder() }
        guard var wake = report.wake else { return }
        if report.pauseEnded && wake == .wal { wake = .timer }
        let run = merge(wake: wake)
        if !run.found && report.walOnly {
            // The commit that woke this member may not be visible yet; when
            // it is this process's own, already read, only a commit written
            // at the same moment by another process is left to catch.
            let explained = run.head > 0 && run.head == ownCommits.newest
            if explained {
                scheduleRecheck(stage: RecheckSchedule.afterOwnCommit, through: RecheckSchedule.afterOwnCommit)
            } else {
                scheduleRecheck(stage: 0)
            }
        }
        // Commits come faster than this member merges them: read events at
        // most once per interval (see ``GroupWatch/pause(for:)``).
        if run.transactionsRead > 1, watch.pause(for: Self.coalesceInterval) { metrics.coalesced() }
    }

    private func safetyTick() {
        watch.rearmWALIfLost()
        _ = merge(wake: .timer)
        if !cursorFlushScheduled { writeCursor() }
        let processing = feed.hasHadSubscriber || notifier.countsAsProcessing || settings.synchronousDelivery != nil
        for warning in health.look(now: .now(), notifier: notifier.activity, processing: processing) {
            switch warning {
            case .postStalled(let seconds):
                logger.info(
                    "a .groupStoreDidSave observer has not returned for \(seconds) s, and later saves wait for it: an observer on a queue whose thread is blocked (.main while the main thread sleeps or waits synchronously) never runs; await instead, or observe on nil or a queue of your own",
                    metadata: ["member": "\(member)"])
            case .postsNotProcessed:
                logger.info(
                    "member '\(member)' posts .groupStoreDidSave, but nothing processes the saves (no saves() loop, and notificationsCountAsProcessed is off): its cursor stays at \(feed.safeCursor()), so they are posted again after a restart and the history is kept for it; a member that only observes sets notificationsCountAsProcessed",
                    metadata: ["member": "\(member)"])
            }
        }
    }

    /// Plans recheck `stage`, and after it, if it finds nothing, the next
    /// ones up to `last`.
    private func scheduleRecheck(stage: Int, through last: Int = RecheckSchedule.lastStage) {
        guard stage <= last, let due = rechecks.plan(stage: stage) else {
            // Nothing came of the wake-ups: the trace forgets them.
            if stage > last && rechecks.isEmpty { firstWake = nil }
            return
        }
        queue.asyncAfter(deadline: due) { [weak self] in
            guard let self else { return }
            rechecks.ran(due: due, stage: stage)
            if !merge(wake: .timer).found { scheduleRecheck(stage: stage + 1, through: last) }
        }
    }

    // MARK: - Merging

    /// What one merge (its rounds of reads) came to.
    private struct MergeRun {
        var found = false
        var transactionsRead = 0
        var head: Int64 = 0
    }

    /// Reads and hands over everything committed after the cursor, in rounds
    /// of a batch; past ``roundsPerWake`` rounds, yields the queue to pending
    /// events and goes on.
    /// - Parameter closingAfter: close an outside writer's changes even when
    ///   another member comes first, if they still follow this transaction
    ///   (the newest when this member left them to it: it did not close them).
    private func merge(wake: DeliveryTrace.Wake, closingAfter: Int64? = nil) -> MergeRun {
        guard phase == .running else { return MergeRun() }
        passOwnCommits()
        let started = DispatchTime.now().uptimeNanoseconds
        let trace = tracer.withLock { $0 }
        var run = MergeRun()
        var tracked = false
        var closed = false
        defer {
            // A wake-up that found nothing is kept as the first only if it
            // came from the -wal file: the commit that woke it may not be
            // visible yet, and a recheck finds it.
            if !run.found, let first = firstWake, first.kind != .wal { firstWake = nil }
            if !run.found { metrics.woke(found: false) }
            metrics.merged(nanoseconds: Int64(DispatchTime.now().uptimeNanoseconds - started))
        }
        for round in 0..<Self.roundsPerWake {
            // After a delivery, a later round's saves were read because the
            // round before had more to read than one round takes.
            if trace != nil && firstWake == nil { firstWake = (round == 0 ? wake : .backlog, DeliveryTrace.now()) }
            let roundStartedAt = trace != nil ? DeliveryTrace.now() : 0
            let outcome = merger.read(traced: trace != nil, schemaTracked: tracked)
            run.head = outcome.head
            if outcome.found {
                if !run.found { metrics.woke(found: true) }
                run.found = true
                run.transactionsRead += outcome.transactions.count
                handOver(outcome, roundStartedAt: roundStartedAt, trace: trace)
                if phase != .running { return run }
            }
            switch outcome.next {
            case .done, .failed:
                return run
            case .more:
                continue
            case .trackSchema:
                // A writer outside the library changed the schema: track it
                // (new tables from their first row) before reading on.
                tracked = true
                merger.trackSchemaChange()
            case .closeOutsideChanges:
                // Once per merge: a writer that goes on committing is closed
                // again by the next wake-up.
                if closed { return run }
                closed = true
                // One member closes them (its commit wakes the others); the
                // others step in only if it has not after a moment.
                guard closingAfter == outcome.head || folder.isFirstLive else {
                    let head = outcome.head
                    queue.asyncAfter(deadline: .now() + Self.closeFallbackDelay) { [weak self] in
                        _ = self?.merge(wake: .timer, closingAfter: head)
                    }
                    return run
                }
                merger.closeOutsideChanges()
            }
        }
        // Plenty left: yield the queue to pending events, then go on.
        queue.async { _ = self.merge(wake: .backlog) }
        return run
    }

    /// Acts on one read: hands the saves over (the metrics first, so they
    /// count a save before anyone sees it), moves the cursor, then notifies
    /// this process's GRDB observers.
    private func handOver(_ outcome: MergeOutcome, roundStartedAt: Double, trace: (@Sendable (DeliveryTrace) -> Void)?) {
        if let resync = outcome.resync {
            keeper.resynced(to: resync.seq)
            // Another history: this process's commits in it are not the ones noted.
            ownCommits.forget()
            metrics.read(0, deliverable: 1, lag: 0)
            settings.synchronousDelivery?(resync)
            // The handler may have closed the store.
            guard phase == .running else { return }
            // Before the subscribers can see it: a save in hand is never past the cursor.
            publicCursor.withLock { $0 = merger.cursor }
            feed.resync(resync)
            let generation = feed.generation
            if settings.synchronousDelivery != nil { feed.markProcessed(resync.seq, generation: generation) }
            notifier.post([resync], generation: generation)
            scheduleCursorFlush()
            // Anything may have changed: GRDB's observers refresh too.
            observers.noteEverything()
            observers.notify(pool: pool, logger: logger)
            return
        }
        let changedTables = outcome.tablesChanged(by: member)
        if !changedTables.isEmpty && observers.cacheIsStale(schemaVersion: outcome.schemaVersion) {
            observers.clearWriterCache(pool: pool, schemaVersion: outcome.schemaVersion)
        }
        for save in outcome.transactions { keeper.merged(seq: save.seq, committedAt: save.committedAt) }
        let deliverable = outcome.deliverable
        metrics.read(outcome.transactions.count, deliverable: deliverable.count, lag: max(0, outcome.head - merger.cursor))
        if let handler = settings.synchronousDelivery {
            for save in deliverable {
                handler(save)
                // The handler may have closed the store.
                guard phase == .running else { return }
            }
        }
        // Before the subscribers can see them: a save in hand is never past the cursor.
        publicCursor.withLock { $0 = merger.cursor }
        feed.append(deliverable, merged: merger.cursor)
        let generation = feed.generation
        if settings.synchronousDelivery != nil, let last = deliverable.last { feed.markProcessed(last.seq, generation: generation) }
        notifier.post(deliverable, generation: generation)
        scheduleCursorFlush()
        let handedOverAt = trace != nil ? DeliveryTrace.now() : 0
        observers.note(changedTables)
        observers.notify(pool: pool, logger: logger)
        if let trace, let wake = firstWake {
            let notifiedAt = DeliveryTrace.now()
            for save in outcome.transactions {
                trace(
                    DeliveryTrace(
                        seq: save.seq, wake: wake.kind, wokeAt: wake.at, mergeStartedAt: roundStartedAt, historyReadAt: outcome.readAt,
                        handedOverAt: handedOverAt, observersNotifiedAt: notifiedAt))
            }
        }
        firstWake = nil
    }

    // MARK: - The cursor

    private func scheduleCursorFlush() {
        guard keeper.persists, !cursorFlushScheduled else { return }
        cursorFlushScheduled = true
        queue.asyncAfter(deadline: .now() + settings.cursorFlushInterval) { [self] in
            cursorFlushScheduled = false
            // Once stopped, only stop() writes it (the member's lock may be
            // released after it).
            guard phase == .running else { return }
            writeCursor()
        }
    }

    /// Writes the cursor as far as the rule allows (``CursorKeeper``).
    private func writeCursor() {
        let plan = keeper.plan(safe: feed.safeCursor())
        if plan.again && phase == .running { scheduleCursorFlush() }
        guard let position = plan.write else { return }
        do {
            try CursorFile(seq: position.seq, epoch: merger.epoch, fingerprint: position.fingerprint)
                .write(member: member, in: folder.handle, staging: folder.directory.staging)
            keeper.wrote(position.seq)
        } catch {
            logger.info("cannot persist the cursor", metadata: ["error": "\(error.message)"])
        }
    }

    // MARK: - The group's structure

    /// Stops everything on the queue and writes the cursor.
    private func halt() {
        safetyTimer?.cancel()
        safetyTimer = nil
        watch.stop()
        // Stopped first: no flush is planned again, and the ones planned do
        // nothing (the cursor is written here, while the lock is held).
        phase = .stopped
        writeCursor()
        merger.close()
    }

    /// The group directory or database was removed or replaced under this
    /// member: stop merging, end the save streams, refuse further writes
    /// (they would land in a file no other member sees).
    private func leave(_ reason: String) {
        let error = GroupStoreError(.groupReplaced, "\(reason) while member '\(member)' ran; reopen the store", path: folder.directory.path)
        let first = departure.withLock { current -> Bool in
            guard current == nil else { return false }
            current = error
            return true
        }
        guard first else { return }
        logger.info("left the group: \(error.message)")
        halt()
        phase = .closed
        notifier.close()
        feed.finish()
    }

    /// This member's folder was removed while it ran: make it again (with
    /// its lock and cursor), or leave if another process took the name.
    private func repairOwnFolder() {
        switch folder.repair() {
        case .intact:
            return
        case .repaired(let path):
            keeper.folderReplaced()
            writeCursor()
            watch.watchOwnFolder()
            logger.info("this member's folder was removed; re-created it", metadata: ["path": "\(path)"])
        case .taken:
            leave("another process took member name '\(member)' after its folder was removed")
        case .failed(let error):
            logger.info(
                "this member's folder was removed and cannot be re-created; payloads are not published, peers read the history",
                metadata: ["error": "\(error)"])
        }
    }
}
