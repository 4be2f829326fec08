import Dispatch
import FolderWatching
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Watches the group with one ``FolderWatcher`` and wakes the ``Merger``.
///
/// Watched: every other member's folder (payloads renamed in), `members/`
/// (members that appear later), the group directory (the `-wal` file being
/// re-created) and the `-wal` file itself (commits by any writer, including
/// ones outside the library). Events of one read are coalesced into one merge,
/// and whichever wake-up comes first delivers: a payload is a wake-up only,
/// its name is enough, and the file is never opened.
/// A `-wal` wake-up that finds nothing is checked again shortly after (the
/// commit may not be visible yet), and a slow safety tick merges anyway, so a
/// missed event costs latency, never a change.
///
/// `@unchecked Sendable`: mutable state is touched on the merger's queue only.
final class GroupWatch: @unchecked Sendable {
    /// After a `-wal` wake-up that found nothing (the commit not visible yet):
    /// look again after these delays.
    static let recheckDelays: [TimeInterval] = [0.0001, 0.002]
    static let safetyInterval: TimeInterval = 1.0
    /// Under load (a merge that found more than one transaction), events are
    /// read at most once per this interval, so a follower costs one merge per
    /// interval rather than one per commit.
    static let coalesceInterval: TimeInterval = 0.001

    private let merger: Merger
    private let directory: GroupDirectory
    private let member: MemberName
    private let logger: Logger
    private var watcher: FolderWatcher?
    private var safetyTimer: (any DispatchSourceTimer)?
    /// When the pending rechecks run.
    private var pendingRechecks: [(due: DispatchTime, stage: Int)] = []
    private var reportedForeignFiles = Set<String>()
    /// A coalescing pause is under way: its `-wal` event is not handled yet.
    private var coalescing = false
    /// Where changes to the group's own structure are reported (the
    /// ``Membership`` that owns this watch), on the merger's queue.
    private let report: @Sendable (Membership.Event) -> Void
    private let databaseInode: UInt64?

    init(
        merger: Merger, directory: GroupDirectory, member: MemberName, logger: Logger,
        report: @escaping @Sendable (Membership.Event) -> Void
    ) {
        self.merger = merger
        self.directory = directory
        self.member = member
        self.logger = logger
        self.report = report
        databaseInode = directory.databaseInode()
    }

    private var ownFolderPath: String { directory.membersPath + "/" + member.rawValue }

    private var queue: DispatchQueue { merger.queue }

    /// Starts watching, then merges once (catching up on what happened while down).
    func start() throws(FolderWatcherError) {
        let watcher = try FolderWatcher(queue: queue) { [weak self] events in self?.handle(events) }
        self.watcher = watcher
        try watcher.watch(directory.path, for: [.created, .movedIn, .deleted, .movedOut])
        // Removals are seen here: a folder's own IN_DELETE_SELF comes only once
        // nobody holds it open, and this member does hold its folder open.
        try watcher.watch(directory.membersPath, for: Self.membersEvents)
        watchOwnFolder()
        watchWAL()
        // Before the handler can run, so every member folder that exists now is
        // watched when start() returns.
        rescanMembers()
        queue.async { self.merger.merge() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.safetyInterval, repeating: Self.safetyInterval, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            // A -wal watch lost without an event (it could not be put
            // back, nor the file's creation seen) comes back here.
            if self.watcher?.isWatching(self.directory.walPath) == false { self.watchWAL(quietly: true) }
            self.merger.merge()
        }
        timer.activate()
        safetyTimer = timer
        watcher.start()
    }

    /// Nothing is pending: no coalescing pause, no recheck. On the merger's
    /// queue (for tests).
    var isIdle: Bool { !coalescing && pendingRechecks.isEmpty }

    /// Stops watching. Runs on the merger's queue.
    func stop() {
        safetyTimer?.cancel()
        safetyTimer = nil
        watcher?.cancel()
        watcher = nil
    }

    /// Watches the `-wal` file. A failure other than its absence is logged
    /// unless `quietly` (the safety tick's retries: logged once already).
    private func watchWAL(quietly: Bool = false) {
        do {
            try watcher?.watch(directory.walPath, for: .modified, target: .file)
        } catch where error.code == .pathNotFound {
            // Not there yet; the group directory watch reports its creation.
        } catch {
            if !quietly { logger.info("cannot watch the database's -wal file", metadata: ["error": "\(error)"]) }
        }
    }

    /// What is watched in `members/`: new member folders, and removals (of
    /// this member's own folder among them).
    static let membersEvents: FolderWatcher.Mask = [.created, .movedIn, .deleted, .movedOut]

    /// Watches `members/` again (after it was re-created), with the same
    /// events as at start.
    private func watchMembersFolder() {
        do {
            try watcher?.watch(directory.membersPath, for: Self.membersEvents)
        } catch {
            logger.info("cannot watch the members folder", metadata: ["path": "\(directory.membersPath)", "error": "\(error)"])
        }
    }

    /// Watches this member's own folder for its removal only.
    func watchOwnFolder() {
        do {
            try watcher?.watch(ownFolderPath, for: [])
        } catch {
            logger.info("cannot watch this member's folder", metadata: ["path": "\(ownFolderPath)", "error": "\(error)"])
        }
    }

    private func watchMember(_ name: String) {
        let path = directory.membersPath + "/" + name
        guard name != member.rawValue, let watcher, !watcher.isWatching(path) else { return }
        do {
            try watcher.watch(path, for: .movedIn)
        } catch {
            logger.info("cannot watch member folder", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// Watches every member folder (after start and after an overflow).
    private func rescanMembers() {
        do {
            for name in try directory.memberNames() { watchMember(name.rawValue) }
        } catch {
            logger.info("cannot list members", metadata: ["error": "\(error.message)"])
        }
    }

    private func handle(_ events: [FolderWatcher.Event]) {
        var pauseEnded = false
        var needsMerge = false
        var walOnly = true
        var wake = DeliveryTrace.Wake.wal
        let membersPath = directory.membersPath
        for event in events {
            switch event.kind {
            case .overflow:
                logger.info("inotify queue overflowed; rescanning the group")
                merger.metrics.overflowed()
                wake = .group
                rescanMembers()
                watchWAL()
                needsMerge = true
                walOnly = false
            case .watchEnded:
                if event.path == directory.path {
                    report(.groupReplaced("the group directory \(directory.path) was removed or moved"))
                    return
                } else if event.path == ownFolderPath {
                    report(.ownFolderRemoved)
                } else if event.path == membersPath {
                    logger.info("the members folder was removed", metadata: ["path": "\(event.path)"])
                } else if event.path == directory.walPath {
                    coalescing = false
                    if databaseWasReplaced() { return }
                    // Removed, or not put back after a coalescing pause: watch
                    // it again if it exists (else its creation is reported),
                    // and read what may have come meanwhile.
                    watchWAL()
                    wake = .group
                    needsMerge = true
                    walOnly = false
                }
            case .deleted, .movedOut:
                if event.path == directory.path, event.name == GroupDirectory.databaseFileName, databaseWasReplaced() {
                    return
                }
                if event.path == membersPath, event.name == member.rawValue {
                    report(.ownFolderRemoved)
                }
            case .modified where event.path == directory.walPath:
                // The first after a coalescing pause is the watcher's own
                // (said whether anything came or not): for the trace, the
                // end of an interval, not a wake-up by a commit.
                if coalescing { pauseEnded = true }
                coalescing = false
                needsMerge = true
            case .created, .movedIn:
                guard let name = event.name else { continue }
                if event.path == directory.path {
                    if name == GroupDirectory.databaseFileName, databaseWasReplaced() {
                        return
                    } else if name == GroupDirectory.databaseFileName + "-wal" {
                        watchWAL()
                        needsMerge = true
                    } else if name == GroupDirectory.membersFolderName {
                        logger.info("the members folder was re-created; watching it again")
                        watchMembersFolder()
                        rescanMembers()
                    }
                } else if event.path == membersPath {
                    if event.isDirectory, MemberName.problem(with: name) == nil {
                        watchMember(name)
                        // Files renamed in before the watch existed sent no event.
                        let folder = membersPath + "/" + name
                        for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                            _ = noteEntry(entry, in: folder)
                        }
                        wake = .group
                        needsMerge = true
                        walOnly = false
                    }
                } else if event.path.hasPrefix(membersPath + "/") {
                    if noteEntry(name, in: event.path) {
                        // Not delivered yet (usually the -wal wake-up has
                        // already delivered it, and nothing needs doing).
                        if walOnly { wake = needsMerge ? .wal : .payload }
                        needsMerge = true
                        walOnly = false
                    }
                }
            default:
                break
            }
        }
        guard needsMerge else { return }
        if pauseEnded && wake == .wal { wake = .timer }
        let found = merger.merge(wake: wake)
        if merger.skippedOwnCommit {
            // Only this process's own commit: move the cursor past it later,
            // in one merge for however many commits come meanwhile.
            scheduleRecheck(stage: 1)
        } else if !found && walOnly {
            scheduleRecheck()
        }
        // Commits come faster than this member merges them: read events at
        // most once per interval, so it costs a merge per interval, not per
        // commit. The -wal file is unwatched meanwhile: the kernel would
        // queue an event for each of its writes (SQLite writes each page of
        // a commit apart), in the writer's own write(2) calls, once per
        // watching member (15 % of a writer's time with 3 peers following).
        // It is watched again at the end, with a .modified event for it in
        // the batch read then, so the merge that follows reads what came
        // meanwhile.
        if merger.lastMergeCount > 1, let watcher {
            // With no -wal watch to take off, no event ends the pause.
            let walWatched = watcher.isWatching(directory.walPath)
            if watcher.pause(for: Self.coalesceInterval, unwatching: [directory.walPath]) {
                coalescing = walWatched
                merger.metrics.coalesced()
            }
        }
    }

    /// Whether `store.sqlite` is no longer the file this member opened; tells
    /// the store if so.
    private func databaseWasReplaced() -> Bool {
        if !directory.rootIsInPlace() {
            report(.groupReplaced("the group directory \(directory.path) was removed or moved"))
            return true
        }
        guard directory.databaseInode() != databaseInode else { return false }
        report(.groupReplaced("the database \(directory.databasePath) was removed or replaced"))
        return true
    }

    /// A `-wal` change may be seen before the commit is: look again shortly,
    /// then a little later. A recheck already pending covers this one if
    /// it runs no later and is not a last stage (so it looks again itself
    /// if it finds nothing). One that runs later (the last stage of an
    /// earlier wake-up, such as a commit that changed no tracked table), or
    /// a last stage, does not: this one is added beside it, so a commit seen
    /// early does not wait for the safety tick, and that stage still runs (a
    /// merge that finds an earlier commit says nothing of a later one being
    /// written).
    private func scheduleRecheck(stage: Int = 0) {
        guard stage < Self.recheckDelays.count else {
            // Nothing came of the wake-ups: the trace forgets them.
            if pendingRechecks.isEmpty { merger.forgetWake() }
            return
        }
        let due = DispatchTime.now() + Self.recheckDelays[stage]
        // Covered only by one that runs no later and looks again itself if
        // it finds nothing (not a last stage).
        let last = Self.recheckDelays.count - 1
        if pendingRechecks.contains(where: { $0.due <= due && $0.stage < last }) { return }
        pendingRechecks.append((due, stage))
        queue.asyncAfter(deadline: due) { [weak self] in
            guard let self else { return }
            if let index = self.pendingRechecks.firstIndex(where: { $0.due == due && $0.stage == stage }) {
                self.pendingRechecks.remove(at: index)
            }
            if !self.merger.merge() { self.scheduleRecheck(stage: stage + 1) }
        }
    }

    /// One entry of a member folder: a payload of an unknown format
    /// version is logged, a name that is not a payload's is reported;
    /// returns whether it names a save not merged yet.
    private func noteEntry(_ name: String, in folder: String) -> Bool {
        switch PayloadFileName.parse(name) {
        case .payload(let seq, let format):
            if format != Payload.formatVersion {
                logger.info("skipping payload of unknown format version", metadata: ["path": "\(folder)/\(name)", "format": "\(format)"])
                return false
            }
            return seq > merger.cursor
        case .bookkeeping:
            return false
        case .foreign:
            reportForeign(folder + "/" + name)
            return false
        }
    }

    private func reportForeign(_ path: String) {
        guard reportedForeignFiles.count < 1000, reportedForeignFiles.insert(path).inserted else { return }
        logger.info("ignoring a file that is not a payload", metadata: ["path": "\(path)"])
    }
}
