import Foundation
import GRDB
import GroupStore
import ServiceLifecycle
import Synchronization

/// A remote held in memory, for tests and examples: the same rules as the
/// embedded and PostgreSQL remotes (server-assigned change tags, conflicts
/// that carry the server's record, tombstones, change tokens that expire,
/// private, public and shared zones, content-addressed assets, push hints),
/// checked by the same conformance suite, with nothing on disk.
///
/// Several users share one remote through one ``Server``: each
/// `MemoryRemote` is one user's connection to it.
///
/// ```swift
/// let server = MemoryRemote.Server()
/// let alice = MemoryRemote(user: "alice", server: server)
/// let bob = MemoryRemote(user: "bob", server: server)
/// var configuration = CloudSyncConfiguration(group: directory, remote: alice)
/// ```
///
/// Its ``run()`` owns nothing but the end of its hint streams: it waits for
/// cancellation or graceful shutdown, then finishes them. Hints are given
/// whether it runs or not.
public final class MemoryRemote: CloudDatabase {
    /// What the users of one in-memory remote share.
    public final class Server: Sendable {
        let store = Mutex(MemoryRemoteStore())
        let hints = PushHints()
        /// Evaluates subscriptions' filters, in SQLite as the embedded remote does.
        let evaluator = try! DatabaseQueue()
        /// Names the remote in messages.
        public let name: String

        public init(name: String = "memory") {
            self.name = name
        }

        /// Everything the remote holds now, to be put back by ``restore(_:)``.
        public struct Snapshot: Sendable {
            let store: MemoryRemoteStore
        }

        /// What the remote holds now (a copy, as a backup would be).
        public func snapshot() -> Snapshot { Snapshot(store: store.withLock { $0 }) }

        /// Puts back what the remote held at `snapshot`: a remote restored from an older copy.
        public func restore(_ snapshot: Snapshot) {
            store.withLock { $0 = snapshot.store }
            hints.yield()
        }

        /// Replaces everything by a fresh remote (another epoch): a remote set up again.
        public func replace() {
            store.withLock { $0 = MemoryRemoteStore() }
            hints.yield()
        }

        /// Prunes the change log to its last `n` entries and the tombstones
        /// pruned with it: tokens from before then expire.
        public func compactLog(keepingLast n: Int) {
            _ = store.withLock { $0.compactLog(keepingLast: n) }
        }
    }

    /// The user this connection acts as.
    public let user: String
    public let server: Server
    /// The faults this remote injects (none by default).
    public let faults: RemoteFaults
    /// The largest estimated size of one `modify`, in bytes.
    public static let maxBatchBytes = 2_000_000
    /// The most records one page of a fetch holds.
    public static let maxFetchLimit = 100_000

    /// - Precondition: `user` is 1 to 128 of A-Z a-z 0-9 . _ - @ +.
    public init(user: String, server: Server = Server(), faults: RemoteFaults = .init()) {
        precondition(CloudZone.isUserName(user), "a remote's user is 1 to 128 of A-Z a-z 0-9 . _ - @ +")
        self.user = user
        self.server = server
        self.faults = faults
    }

    public var displayName: String { "\(server.name) (in memory)" }

    public func run() async throws {
        try? await gracefulShutdown()
        server.hints.finish()
    }

    public func pushHints() -> AsyncStream<Void> {
        server.hints.stream()
    }

    public func account() async throws -> String {
        try faults.beforeCall("read the account", remote: displayName)
        return user
    }

    public func history(keeping mark: CloudHistoryMark?) async throws -> CloudRemoteHistory {
        try faults.beforeCall("read the history", remote: displayName)
        let (head, keeps) = server.store.withLock { store in (store.headMark, mark.map { store.keeps($0) } ?? true) }
        return CloudRemoteHistory(head: head, keepsMark: keeps, now: Date())
    }

    public func prepare(_ types: [CloudRecordType]) async throws {
        try faults.beforeCall("prepare record types", remote: displayName)
        try server.store.withLock { (store: inout MemoryRemoteStore) throws(CloudSyncError) in try store.prepare(types) }
        server.hints.yield()
    }

    public func modify(_ changes: [CloudRecordChange]) async throws -> [CloudModifyResult] {
        try await modify(changes, keeping: nil).value ?? []
    }

    /// Checks `mark` and applies `changes` under one hold of the store.
    public func modify(_ changes: [CloudRecordChange], keeping mark: CloudHistoryMark?) async throws -> CloudHistoryChecked<
        [CloudModifyResult]
    > {
        try faults.beforeCall("modify", remote: displayName)
        guard changes.count <= faults.maxBatchRecords else {
            throw CloudSyncError(
                .batchTooLarge, "\(changes.count) changes are more than \(displayName) takes at once (\(faults.maxBatchRecords))")
        }
        let bytes = changes.reduce(0) { $0 + $1.batchSize }
        guard bytes <= Self.maxBatchBytes else {
            throw CloudSyncError(.batchTooLarge, "\(changes.count) changes (\(bytes) bytes) are more than \(displayName) takes at once")
        }
        let (user, always, now) = (self.user, faults.conflictOnEverySave, Date())
        let (results, head) = server.store.withLock { store -> ([CloudModifyResult]?, CloudHistoryMark) in
            guard mark.map({ store.keeps($0) }) ?? true else { return (nil, store.headMark) }
            return (changes.map { store.apply($0, user: user, conflictOnEverySave: always, now: now) }, store.headMark)
        }
        if results?.isEmpty == false { server.hints.yield() }
        return CloudHistoryChecked(value: results, history: CloudRemoteHistory(head: head, keepsMark: results != nil, now: now))
    }

    public func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
        guard let batch = try await fetchChanges(in: zone, since: token, limit: limit, keeping: nil).value else {
            preconditionFailure("no mark asked about is always kept")
        }
        return batch
    }

    /// Checks `mark` and reads the page under one hold of the store.
    public func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        try await fetchChanges(in: zone, since: token, limit: limit, keeping: mark, subscription: CloudSubscription())
    }

    /// ``fetchChanges(in:since:limit:keeping:)`` narrowed to `subscription`,
    /// evaluated by SQLite as the embedded remote evaluates it (``Subset``).
    public func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?, subscription: CloudSubscription
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        try faults.beforeCall("fetch changes", remote: displayName)
        try checkReadable(zone)
        try subscription.refusingClaims(on: displayName)
        let (user, display, limit, now) = (self.user, displayName, min(max(1, limit), Self.maxFetchLimit), Date())
        let (faults, evaluator) = (self.faults, server.evaluator)
        return try server.store.withLock { (store: inout MemoryRemoteStore) throws(CloudSyncError) in
            guard mark.map({ store.keeps($0) }) ?? true else {
                return CloudHistoryChecked(value: nil, history: CloudRemoteHistory(head: store.headMark, keepsMark: false, now: now))
            }
            let start = try FeedToken.start(of: token, in: zone, remote: display, faults: faults)
            if zone.scope == .shared, store.access(to: zone, user: user) == nil {
                throw CloudSyncError(.permissionDenied, "\(zone) is not shared with \(user) on \(display)")
            }
            let subset =
                subscription.isEmpty
                ? nil : try Subset(subscription, types: Array(store.types.values), evaluator: evaluator, display: display)
            let page = try store.page(zone, after: start, limit: limit, display: display, subset: subset)
            return CloudHistoryChecked(value: page, history: CloudRemoteHistory(head: store.headMark, keepsMark: true, now: now))
        }
    }

    public func selected(_ ids: [CloudRecordID], subscription: CloudSubscription) async throws -> Set<CloudRecordID> {
        try faults.beforeCall("select records", remote: displayName)
        try subscription.refusingClaims(on: displayName)
        let (user, display, evaluator) = (self.user, displayName, server.evaluator)
        return try server.store.withLock { (store: inout MemoryRemoteStore) throws(CloudSyncError) in
            let subset = try Subset(subscription, types: Array(store.types.values), evaluator: evaluator, display: display)
            var selected = Set<CloudRecordID>()
            for id in ids {
                guard store.mayRead(id.zone, user: user), let stored = store.records[MemoryRemoteStore.Key(store.canonical(id))],
                    !stored.deleted
                else { continue }
                let inSubset =
                    subset.types.contains(id.type.lowercased()) ? try subset.matches(id.type, id.name, stored.record.fields) : true
                if inSubset { selected.insert(id) }
            }
            return selected
        }
    }

    /// A subscription as the store evaluates it: the types it narrows, and
    /// whether a record (its type, name and fields; `nil`: none live) is in its subset.
    struct Subset {
        var types: Set<String>
        var matches: (String, String, CloudFields?) throws(CloudSyncError) -> Bool

        init(_ subscription: CloudSubscription, types known: [CloudRecordType], evaluator: DatabaseQueue, display: String)
            throws(CloudSyncError)
        {
            types = Set(subscription.filters.keys)
            let sql: String
            do {
                // ?3 (the name) read always, as SQLite wants every argument given to be read.
                sql =
                    try "SELECT (?3 IS NULL AND 0) OR "
                    + RecordFilterSQL.matches(fields: "?1", type: "?2", name: "?3", subscription: subscription, types: known)
            } catch {
                throw CloudSyncError.wrap(error, "evaluate a subscription on \(display)")
            }
            matches = { (type: String, name: String, fields: CloudFields?) throws(CloudSyncError) -> Bool in
                do {
                    return try evaluator.read { db in
                        try Bool.fetchOne(db, sql: sql, arguments: [fields.map { CloudFieldsJSON.encode($0) }, type, name]) ?? false
                    }
                } catch {
                    throw CloudSyncError(
                        .invalidConfiguration, "a subscription's filter of \(type) cannot be evaluated on \(display): \(error)",
                        underlying: error)
                }
            }
        }
    }

    /// Refuses a zone this user may never read.
    private func checkReadable(_ zone: CloudZone) throws {
        if zone.scope == .private, zone.owner != user {
            throw CloudSyncError(.permissionDenied, "\(zone) is another user's private zone; \(user) may not read it from \(displayName)")
        }
        if zone.scope == .shared, !CloudZone.isUserName(zone.owner) {
            throw CloudSyncError(.invalidConfiguration, "\(zone) cannot exist on \(displayName): its owner is not a user name")
        }
    }

    public func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> {
        try faults.beforeCall("check records the listing lacks", remote: displayName)
        return server.store.withLock { $0.forgotten(records) }
    }

    public func missingAssets(_ hashes: [String]) async throws -> Set<String> {
        try faults.beforeCall("look up assets", remote: displayName)
        return server.store.withLock { store in Set(hashes.filter { store.assets[$0] == nil }) }
    }

    public func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws {
        try faults.beforeCall("upload an asset", remote: displayName)
        guard bytes.count == asset.size else {
            throw CloudSyncError(
                .badRemote, "\(displayName) refused asset \(asset.hash): \(bytes.count) bytes given, \(asset.size) announced")
        }
        let actual = SHA256.hex(bytes)
        guard actual == asset.hash else {
            throw CloudSyncError(.badRemote, "\(displayName) refused asset \(asset.hash): the bytes given hash to \(actual)")
        }
        server.store.withLock { $0.assets[asset.hash] = bytes }
    }

    public func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] {
        try faults.beforeCall("download an asset", remote: displayName)
        guard let bytes = server.store.withLock({ $0.assets[asset.hash] }) else {
            throw CloudSyncError(.badRemote, "\(displayName) has no asset \(asset.hash)")
        }
        return bytes
    }

    public func share(_ zone: String, with member: String, access: CloudShareAccess?) async throws {
        try faults.beforeCall("share a zone", remote: displayName)
        guard CloudZone.isZoneName(zone) else {
            throw CloudSyncError(
                .invalidConfiguration, "a shared zone's name is 1 to 63 of A-Z a-z 0-9 . _ -, not \(String(reflecting: zone))")
        }
        guard CloudZone.isUserName(member), member != user else {
            throw CloudSyncError(.invalidConfiguration, "zone \(zone) of \(user) cannot be shared with \(String(reflecting: member))")
        }
        let key = MemoryRemoteStore.ShareKey(owner: user, zone: zone, member: member)
        server.store.withLock { $0.shares[key] = access.map { $0 == .readWrite } }
        server.hints.yield()
    }

    public func shares() async throws -> [CloudShare] {
        try faults.beforeCall("list shares", remote: displayName)
        let user = self.user
        return server.store.withLock { store in
            store.shares.filter { $0.key.owner == user || $0.key.member == user }
                .map {
                    CloudShare(
                        zone: .shared(owner: $0.key.owner, name: $0.key.zone), user: $0.key.member,
                        access: $0.value ? .readWrite : .readOnly)
                }
                .sorted { ($0.zone.description, $0.user) < ($1.zone.description, $1.user) }
        }
    }
}
