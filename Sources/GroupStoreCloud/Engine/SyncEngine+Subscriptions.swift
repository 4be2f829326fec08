import Foundation
import GRDB
import GroupStore
import Logging

extension SyncEngine {
    /// The configured subscriptions (``CloudSyncConfiguration/subscriptions``),
    /// checked against the mapped tables: each names a synced table, reads
    /// only its columns, and has a value for each `param(…)` it reads.
    static func subscription(_ configuration: CloudSyncConfiguration, tables: [MappedTable]) throws -> CloudSubscription {
        var filters: [String: CloudFilter] = [:]
        for (name, filter) in configuration.subscriptions.sorted(by: { $0.key < $1.key }) {
            guard let table = tables.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw CloudSyncError(
                    .invalidConfiguration, "a subscription names table \(name), which this group does not sync (sync it first)")
            }
            try filter.check(columns: table.columns.map(\.name), table: table.name)
            for parameter in filter.parameters.sorted() where configuration.subscriptionParameters[parameter] == nil {
                throw CloudSyncError(
                    .invalidConfiguration,
                    "the subscription of table \(table.name) reads param('\(parameter)'), which has no value (give one: --param \(parameter)=VALUE)"
                )
            }
            filters[table.name.lowercased()] = filter
        }
        return CloudSubscription(filters: filters, parameters: configuration.subscriptionParameters)
    }

    /// The subscription of the tables syncing with `zone` (empty: none is subscribed).
    func subscription(of zone: CloudZone) -> CloudSubscription {
        subscription.restricted(to: Set(tables.filter { self.zone(of: $0) == zone }.map { $0.name.lowercased() }))
    }

    /// The sync-state key keeping a table's subscription as last synced.
    private static func key(_ table: MappedTable) -> String { "subscription:" + table.name.lowercased() }

    /// A setup step: a table whose subscription changed since its rows were
    /// synced (a new filter, new parameter values, one added or removed)
    /// gets only the difference. The rows the new subscription holds and the
    /// old did not are listed (one listing of that difference, not of the
    /// table); of the rows held here, those the remote says the new one does
    /// not hold are moved out. Pending local changes stay pending. The new
    /// subscription is recorded last, so a sync that fails before does it
    /// again.
    func applySubscriptionChanges(summary: inout CloudSyncSummary) async throws {
        for table in tables {
            let new = subscription.boundFilter(for: table.name)
            let key = Self.key(table)
            let (stored, held) = try readDatabase { db -> (String?, [String]) in
                let stored = String.fromDatabaseValue(try SyncState.value(db, key))
                let held = try String.fetchAll(
                    db, sql: "SELECT name FROM \(SyncState.record) WHERE entity = ?", arguments: [table.name])
                return (stored, held)
            }
            guard stored != new?.canonical else { continue }
            let zone = self.zone(of: table)
            if !held.isEmpty {
                let old = try stored.map { try CloudFilter($0) }
                if let newlyIn = CloudFilter.newlyIn(new, leaving: old) {
                    var parked: [RecordApplier.Parked] = []
                    guard try await moveIn(table, zone: zone, newlyIn: newlyIn, summary: &summary, parked: &parked) else { return }
                    try await pullParents(of: parked, zone: zone, summary: &summary)
                }
                if new != nil {
                    try await moveOut(held.map { CloudRecordID(zone: zone, type: table.name, name: $0) }, notIn: zone, summary: &summary)
                }
            }
            try writeDatabase { db in try SyncState.setValue(db, key, new?.canonical) }
            logger.info(
                "subscription changed: only the difference moved",
                metadata: ["table": "\(table.name)", "from": "\(stored ?? "every row")", "to": "\(new?.canonical ?? "every row")"])
        }
        state.setupLeft.remove(.applySubscriptions)
    }

    /// Lists the rows of `table` that `filter` holds (the rows newly in its
    /// subscription) and applies them; the zone's token stays (its next
    /// fetch goes on from where it was). Returns `false` when the remote was
    /// found replaced or restored meanwhile (the step waits for its listing).
    /// - Parameter parked: the records its pages parked are added here.
    func moveIn(
        _ table: MappedTable, zone: CloudZone, newlyIn filter: CloudFilter, summary: inout CloudSyncSummary,
        parked: inout [RecordApplier.Parked]
    ) async throws -> Bool {
        // Of the zone's other types, nothing.
        var filters = [table.name.lowercased(): filter]
        for other in tables where other != table && self.zone(of: other) == zone {
            filters[other.name.lowercased()] = try CloudFilter("FALSE")
        }
        let difference = CloudSubscription(filters: filters, parameters: subscription.parameters)
        var token: CloudChangeToken?
        while true {
            let since = token
            let (answer, reset) = try await callKeepingMark("list rows newly in a subscription of \(table.name)", history: \.history) {
                try await self.remote.fetchChanges(
                    in: zone, since: since, limit: Self.fetchPageSize, keeping: $0, subscription: difference)
            }
            guard !reset, let batch = answer.value else { return false }
            let page = CloudChangeBatch(changed: batch.changed, deleted: [], token: batch.token, moreComing: batch.moreComing)
            let (outcome, _) = try await apply(page, zone: zone, saveToken: nil, deleted: [], forgotten: [])
            report(outcome, into: &summary)
            summary.fetched += outcome.applied
            parked += outcome.parked
            guard batch.moreComing else { return true }
            token = batch.token
        }
    }

    /// The rule for references across subsets: a row held here keeps its
    /// parent. A child this fetch parked because its parent is not here
    /// (`waits:`), whose parent's table is subscribed in the same zone, would
    /// wait for ever if the parent is outside the subset: its parents are
    /// listed with it instead (a listing of the parent table narrowed to the
    /// keys its children reference, read from a field or, for a link table,
    /// from the child's key), and the child is applied then. A parent so
    /// brought in that waits for its own parent brings that one in turn, up
    /// to ``parentGenerations`` generations. A parent brought in so is kept as
    /// last synced while a row here references it, as
    /// ``RecordApplier/moveOut(_:in:outcome:)`` keeps one; changes to it
    /// outside the subset are not sent here. A child whose parent the remote
    /// does not have (or does not let this user read), or whose reference is
    /// not a single column of text or a number, keeps waiting, as without a
    /// subscription.
    /// - Parameter parked: the records this fetch parked, by table.
    func pullParents(of parked: [RecordApplier.Parked], zone: CloudZone, summary: inout CloudSyncSummary)
        async throws
    {
        let subscription = self.subscription(of: zone)
        guard !subscription.isEmpty else { return }
        var waiting = parked.filter { $0.reason.hasPrefix("waits:") }
        var listed: Set<CloudFilter> = []
        for _ in 0..<Self.parentGenerations where !waiting.isEmpty {
            let wanted = try readDatabase { db in try parentListings(for: waiting, zone: zone, subscription: subscription, db) }
            waiting = []
            for (parent, filter) in wanted where listed.insert(filter).inserted {
                logger.info(
                    "listing parents outside the subscription for the rows that reference them", metadata: ["table": "\(parent.name)"])
                var parkedNow: [RecordApplier.Parked] = []
                guard try await moveIn(parent, zone: zone, newlyIn: filter, summary: &summary, parked: &parkedNow) else { return }
                waiting += parkedNow.filter { $0.reason.hasPrefix("waits:") }
            }
        }
    }

    /// How many generations of parents ``pullParents(of:zone:summary:)``
    /// brings in (a child, its parent, the grandparent, …): a chain of
    /// references deeper than this keeps its last row waiting.
    static let parentGenerations = 8

    /// The listings that bring in the parents `waiting` records reference,
    /// each of at most 200 keys (a filter's parse is bounded).
    private func parentListings(
        for waiting: [RecordApplier.Parked], zone: CloudZone, subscription: CloudSubscription, _ db: Database
    ) throws -> [(MappedTable, CloudFilter)] {
        let orphans = try SyncState.orphans(db)
        var values: [String: [String: Set<String>]] = [:]
        for (name, record) in orphans.compactMap({ orphan in orphan.record.map { (orphan.entity, $0) } })
        where waiting.contains(where: { $0.table == name && $0.record == record.id.name }) && record.id.zone == zone {
            let child = tables.first { $0.name.lowercased() == name.lowercased() }
            let references = try Row.fetchAll(
                db, sql: "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?) ORDER BY id, seq", arguments: [name])
            for (_, parts) in Dictionary(grouping: references, by: { $0[0] as Int64 }) where parts.count == 1 {
                let (parentName, from, to) = (parts[0][1] as String, parts[0][2] as String, parts[0][3] as String?)
                guard let parent = tables.first(where: { $0.name.lowercased() == parentName.lowercased() }),
                    subscription.filters[parent.name.lowercased()] != nil, self.zone(of: parent) == zone,
                    let column = to ?? parent.keyColumns.first, let literal = Self.reference(from, of: record, in: child)
                else { continue }
                values[parent.name, default: [:]][column, default: []].insert(literal)
            }
        }
        var listings: [(MappedTable, CloudFilter)] = []
        for (name, columns) in values.sorted(by: { $0.key < $1.key }) {
            guard let parent = tables.first(where: { $0.name == name }) else { continue }
            for (column, literals) in columns.sorted(by: { $0.key < $1.key }) {
                let quoted = "\"" + column.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                let sorted = literals.sorted()
                for start in stride(from: 0, to: sorted.count, by: 200) {
                    let chunk = sorted[start..<min(sorted.count, start + 200)]
                    listings.append((parent, try CloudFilter("\(quoted) IN (\(chunk.joined(separator: ", ")))")))
                }
            }
        }
        return listings
    }

    /// The value `record` holds in column `column` as a filter's literal: a
    /// field, or a part of its key (a link table's reference), read from its
    /// name.
    private static func reference(_ column: String, of record: CloudRecord, in table: MappedTable?) -> String? {
        if let table, let index = table.keyColumns.firstIndex(where: { $0.lowercased() == column.lowercased() }) {
            guard let parts = RecordName.keyValues(of: record.id.name, shape: table.key), index < parts.count,
                case .text(let text) = parts[index]
            else { return nil }
            return literal(.text(text))
        }
        return literal(record.fields[column])
    }

    /// A field as a filter's literal, if it can be one (text or a number).
    private static func literal(_ value: CloudValue?) -> String? {
        switch value {
        case .text(let text) where !text.utf8.contains(0): FilterSQL.quoted(text)
        case .integer(let integer): String(integer)
        case .real(let real) where real.isFinite: FilterSQL.real(real)
        default: nil
        }
    }

    /// Moves out of this group the records of `ids` that the remote says
    /// `zone`'s subscription does not hold (see
    /// ``RecordApplier/moveOut(_:in:outcome:)``).
    func moveOut(_ ids: [CloudRecordID], notIn zone: CloudZone, summary: inout CloudSyncSummary) async throws {
        let subscription = self.subscription(of: zone)
        guard !ids.isEmpty, !subscription.isEmpty else { return }
        var out: [CloudRecordID] = []
        for start in stride(from: 0, to: ids.count, by: Self.fetchPageSize) {
            let page = Array(ids[start..<min(ids.count, start + Self.fetchPageSize)])
            let selected = try await Retry.run(configuration, "ask \(remote.displayName) which rows a subscription holds") {
                try await self.remote.selected(page, subscription: subscription)
            }
            out += page.filter { !selected.contains($0) }
        }
        guard !out.isEmpty else { return }
        let empty = CloudChangeBatch(changed: [], deleted: [], token: CloudChangeToken(""), moreComing: false)
        let (outcome, _) = try await apply(empty, zone: zone, saveToken: nil, deleted: [], forgotten: [], movedOut: out)
        report(outcome, into: &summary)
    }

    /// A group's own uploads of subscribed tables, acknowledged: those the
    /// subscription does not hold (written here outside it) are moved out,
    /// as a row another host moved out would be. Their upload is kept on
    /// the remote; a later local edit of one is a new row here.
    func moveOutOwnWrites(_ ids: [CloudRecordID], summary: inout CloudSyncSummary) async throws {
        let subscribed = subscription.filters
        let byZone = Dictionary(grouping: ids.filter { subscribed[$0.type.lowercased()] != nil }, by: \.zone)
        for (zone, ids) in byZone { try await moveOut(ids, notIn: zone, summary: &summary) }
    }
}
