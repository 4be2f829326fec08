import Dispatch
import FolderWatching
import Foundation
import Logging

/// Watches the group with one ``FolderWatcher`` and says what each batch of
/// events means, as a ``WatchReport`` its owner (``Delivery``) acts on.
///
/// Watched: every other member's folder (payloads renamed in), `members/`
/// (members that appear later), the group directory (the `-wal` file being
/// re-created, the database replaced) and the `-wal` file itself (commits by
/// any writer, including ones outside the library). A payload is a wake-up
/// only: its name is enough, and the file is never opened. The watch keeps
/// its own watches right (new member folders, the `-wal` file re-created, a
/// rescan after an overflow); what to do about a wake-up is its owner's call.
///
/// Touched on its owner's queue only (the watcher's events arrive there).
final class GroupWatch {
    private let directory: GroupDirectory
    private let member: MemberName
    private let logger: Logger
    private var watcher: FolderWatcher?
    private var reportedForeignFiles = Set<String>()
    /// A coalescing pause is under way: its `-wal` event is not handled yet.
    private(set) var isCoalescing = false
    private let databaseInode: UInt64?

    init(directory: GroupDirectory, member: MemberName, logger: Logger) {
        self.directory = directory
        self.member = member
        self.logger = logger
        databaseInode = directory.databaseInode()
    }

    private var ownFolderPath: String { directory.membersPath + "/" + member.rawValue }

    /// What is watched in `members/`: new member folders, and removals (of
    /// this member's own folder among them).
    static let membersEvents: FolderWatcher.Mask = [.created, .movedIn, .deleted, .movedOut]

    /// Starts watching; every member folder that exists now is watched when
    /// it returns. Events go to `handler` on `queue`.
    func start(queue: DispatchQueue, handler: @escaping FolderWatcher.Handler) throws(FolderWatcherError) {
        let watcher = try FolderWatcher(queue: queue, handler: handler)
        self.watcher = watcher
        try watcher.watch(directory.path, for: [.created, .movedIn, .deleted, .movedOut])
        // Removals are seen here: a folder's own IN_DELETE_SELF comes only once
        // nobody holds it open, and this member does hold its folder open.
        try watcher.watch(directory.membersPath, for: Self.membersEvents)
        watchOwnFolder()
        watchWAL()
        rescanMembers()
        watcher.start()
    }

    /// Stops watching (no event is handled after it, on the owner's queue).
    func stop() {
        watcher?.cancel()
        watcher = nil
    }

    /// Watches the `-wal` file again if its watch was lost without an event
    /// (it could not be put back, nor the file's creation seen).
    func rearmWALIfLost() {
        if watcher?.isWatching(directory.walPath) == false { watchWAL(quietly: true) }
    }

    /// Commits come faster than the owner merges them: stop reading events
    /// for `interval`, the `-wal` file unwatched meanwhile (the kernel would
    /// queue an event for each of its writes, in the writer's own `write(2)`
    /// calls, once per watching member). It is watched again at the end, with
    /// a `.modified` event for it in the batch read then, so the merge that
    /// follows reads what came meanwhile. Returns whether a pause started.
    func pause(for interval: Double) -> Bool {
        guard let watcher else { return false }
        // With no -wal watch to take off, no event ends the pause.
        let walWatched = watcher.isWatching(directory.walPath)
        guard watcher.pause(for: interval, unwatching: [directory.walPath]) else { return false }
        isCoalescing = walWatched
        return true
    }

    /// Watches this member's own folder for its removal only.
    func watchOwnFolder() {
        do {
            try watcher?.watch(ownFolderPath, for: [])
        } catch {
            logger.info("cannot watch this member's folder", metadata: ["path": "\(ownFolderPath)", "error": "\(error)"])
        }
    }

    /// What one batch of events means. `cursor`: the last transaction merged
    /// (a payload at or before it is no news).
    func interpret(_ events: [FolderWatcher.Event], cursor: Int64) -> WatchReport {
        var report = WatchReport()
        let membersPath = directory.membersPath
        for event in events {
            switch event.kind {
            case .overflow:
                logger.info("inotify queue overflowed; rescanning the group")
                report.overflowed = true
                rescanMembers()
                watchWAL()
                report.wake(.group)
            case .watchEnded:
                if event.path == directory.path {
                    return departed("the group directory \(directory.path) was removed or moved")
                } else if event.path == ownFolderPath {
                    report.ownFolderRemoved = true
                } else if event.path == membersPath {
                    logger.info("the members folder was removed", metadata: ["path": "\(event.path)"])
                } else if event.path == directory.walPath {
                    isCoalescing = false
                    if let departure = replacement() { return departed(departure) }
                    // Removed, or not put back after a coalescing pause: watch
                    // it again if it exists (else its creation is reported),
                    // and read what may have come meanwhile.
                    watchWAL()
                    report.wake(.group)
                }
            case .deleted, .movedOut:
                if event.path == directory.path, event.name == GroupDirectory.databaseFileName, let departure = replacement() {
                    return departed(departure)
                }
                if event.path == membersPath, event.name == member.rawValue {
                    report.ownFolderRemoved = true
                }
            case .modified where event.path == directory.walPath:
                // The first after a coalescing pause is the watcher's own
                // (said whether anything came or not): for the trace, the
                // end of an interval, not a wake-up by a commit.
                if isCoalescing { report.pauseEnded = true }
                isCoalescing = false
                report.wake(.wal)
            case .created, .movedIn:
                guard let name = event.name else { continue }
                if event.path == directory.path {
                    if name == GroupDirectory.databaseFileName, let departure = replacement() {
                        return departed(departure)
                    } else if name == GroupDirectory.databaseFileName + "-wal" {
                        watchWAL()
                        report.wake(.wal)
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
                            _ = isNews(entry, in: folder, cursor: cursor)
                        }
                        report.wake(.group)
                    }
                } else if event.path.hasPrefix(membersPath + "/"), isNews(name, in: event.path, cursor: cursor) {
                    // Not merged yet (usually the -wal wake-up has already
                    // merged it, and nothing needs doing).
                    report.wake(.payload)
                }
            default:
                break
            }
        }
        return report
    }

    private func departed(_ reason: String) -> WatchReport {
        var report = WatchReport()
        report.departure = reason
        return report
    }

    /// Why `store.sqlite` is no longer the file this member opened, if it is not.
    private func replacement() -> String? {
        if !directory.rootIsInPlace() { return "the group directory \(directory.path) was removed or moved" }
        guard directory.databaseInode() != databaseInode else { return nil }
        return "the database \(directory.databasePath) was removed or replaced"
    }

    /// Watches the `-wal` file. A failure other than its absence is logged
    /// unless `quietly` (the retries: logged once already).
    private func watchWAL(quietly: Bool = false) {
        do {
            try watcher?.watch(directory.walPath, for: .modified, target: .file)
        } catch  where error.code == .pathNotFound {
            // Not there yet; the group directory watch reports its creation.
        } catch {
            if !quietly { logger.info("cannot watch the database's -wal file", metadata: ["error": "\(error)"]) }
        }
    }

    /// Watches `members/` again (after it was re-created).
    private func watchMembersFolder() {
        do {
            try watcher?.watch(directory.membersPath, for: Self.membersEvents)
        } catch {
            logger.info("cannot watch the members folder", metadata: ["path": "\(directory.membersPath)", "error": "\(error)"])
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

    /// Watches every member folder (at start and after an overflow).
    private func rescanMembers() {
        do {
            for name in try directory.memberNames() { watchMember(name.rawValue) }
        } catch {
            logger.info("cannot list members", metadata: ["error": "\(error.message)"])
        }
    }

    /// One entry of a member folder: a payload of an unknown format version
    /// is logged, a name that is not a payload's is reported; returns whether
    /// it names a transaction after `cursor`.
    private func isNews(_ name: String, in folder: String, cursor: Int64) -> Bool {
        switch PayloadFileName.parse(name) {
        case .payload(let seq, let format):
            if format != Payload.formatVersion {
                logger.info("skipping payload of unknown format version", metadata: ["path": "\(folder)/\(name)", "format": "\(format)"])
                return false
            }
            return seq > cursor
        case .bookkeeping:
            return false
        case .foreign:
            let path = folder + "/" + name
            if reportedForeignFiles.count < 1000, reportedForeignFiles.insert(path).inserted {
                logger.info("ignoring a file that is not a payload", metadata: ["path": "\(path)"])
            }
            return false
        }
    }
}

/// What one batch of the group's events means.
struct WatchReport: Equatable {
    /// Something may have been committed: what woke the member first.
    private(set) var wake: DeliveryTrace.Wake?
    /// Only the `-wal` file changed: a commit seen that early may not be
    /// visible yet, so a read that finds nothing is worth repeating.
    private(set) var walOnly = true
    /// The first event after a coalescing pause came (for the trace, the end
    /// of an interval rather than a commit's wake-up).
    var pauseEnded = false
    var overflowed = false
    /// The group directory or its database was removed or replaced.
    var departure: String?
    /// This member's own folder was removed.
    var ownFolderRemoved = false

    /// A wake-up of `kind`: a change to the group's structure wins; else the
    /// first one is kept (a payload after a `-wal` event keeps `.wal`).
    mutating func wake(_ kind: DeliveryTrace.Wake) {
        switch kind {
        case .group: wake = .group
        case .payload where walOnly: wake = wake == nil ? .payload : .wal
        default: if wake == nil { wake = kind }
        }
        if kind != .wal { walOnly = false }
    }
}
