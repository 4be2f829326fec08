import Foundation
import GroupStoreCloud

/// The JSON of the `cloud` commands (times in Unix seconds, absent values as `null`).
extension ReportJSON {
    /// One sync's outcome: `cloud sync --format json`, the `finished` event of
    /// `cloud run --format jsonl`, and `lastSync` in `cloud status`.
    struct CloudSummary: Encodable {
        var startedAt: Double
        var finishedAt: Double
        var uploaded: Int
        var fetched: Int
        var conflicts: Int
        var parked: Int
        var pending: Int
        var error: Nullable<String>
        var errorCode: Nullable<String>

        init(_ summary: CloudSyncSummary) {
            startedAt = summary.startedAt.timeIntervalSince1970
            finishedAt = summary.finishedAt.timeIntervalSince1970
            uploaded = summary.uploaded
            fetched = summary.fetched
            conflicts = summary.conflicts
            parked = summary.parked
            pending = summary.pending
            error = Nullable(summary.error)
            errorCode = Nullable(summary.errorCode)
        }
    }

    /// `groupstore cloud status --format json`.
    struct CloudStatus: Encodable {
        struct Parked: Encodable {
            var table: String
            var record: String
            var direction: String
            var reason: String
        }
        var group: String
        var live: Bool
        var account: Nullable<String>
        var pending: Int
        var transactionsNotTakenIn: Int
        var parked: Int
        var conflicts: Int
        var lastSync: Nullable<CloudSummary>
        var parkedRecords: [Parked]
        var remoteReset: Nullable<RemoteReset>
        var schemaDrift: [Drift]
        var subscriptions: [Subscription]

        struct RemoteReset: Encodable {
            var kind: String
            var message: String
            var at: Double
        }
        struct Drift: Encodable {
            var table: String
            var column: String
            var seenAt: Double
        }
        struct Subscription: Encodable {
            var table: String
            var filter: String
            var rows: Int
        }

        init(_ status: CloudSyncStatus) {
            group = status.group
            live = status.live
            account = Nullable(status.account)
            pending = status.pending
            transactionsNotTakenIn = status.transactionsNotTakenIn
            parked = status.parked
            conflicts = status.conflicts
            lastSync = Nullable(status.lastSync.map(CloudSummary.init))
            parkedRecords = status.parkedRecords.map {
                Parked(table: $0.table, record: $0.record, direction: $0.direction, reason: $0.reason)
            }
            remoteReset = Nullable(
                status.remoteReset.map { RemoteReset(kind: $0.kind.rawValue, message: $0.message, at: $0.at.timeIntervalSince1970) })
            schemaDrift = status.schemaDrift.map { Drift(table: $0.table, column: $0.column, seenAt: $0.seenAt.timeIntervalSince1970) }
            subscriptions = status.subscriptions.map { Subscription(table: $0.table, filter: $0.filter, rows: $0.rows) }
        }
    }

    /// One line of `groupstore cloud run --format jsonl`: `{"event":…, …}`.
    struct CloudEvent: Encodable {
        var event: CloudSyncEvent

        private enum Key: String, CodingKey {
            case event, holder, complete, count, table, record, outcome, reason, zone, kind, column
        }

        func encode(to encoder: any Encoder) throws {
            switch event {
            case .finished(let summary):
                // The summary's fields beside "event".
                try CloudSummary(summary).encode(to: encoder)
                var container = encoder.container(keyedBy: Key.self)
                try container.encode("finished", forKey: .event)
                return
            default:
                break
            }
            var container = encoder.container(keyedBy: Key.self)
            switch event {
            case .standby(let holder):
                try container.encode("standby", forKey: .event)
                try container.encode(holder, forKey: .holder)
            case .active:
                try container.encode("active", forKey: .event)
            case .started(let complete):
                try container.encode("started", forKey: .event)
                try container.encode(complete, forKey: .complete)
            case .uploaded(let count):
                try container.encode("uploaded", forKey: .event)
                try container.encode(count, forKey: .count)
            case .fetched(let count):
                try container.encode("fetched", forKey: .event)
                try container.encode(count, forKey: .count)
            case .conflict(let table, let record, let outcome):
                try container.encode("conflict", forKey: .event)
                try container.encode(table, forKey: .table)
                try container.encode(record, forKey: .record)
                try container.encode(outcome.rawValue, forKey: .outcome)
            case .parked(let table, let record, let reason):
                try container.encode("parked", forKey: .event)
                try container.encode(table, forKey: .table)
                try container.encode(record, forKey: .record)
                try container.encode(reason, forKey: .reason)
            case .zoneLeft(let zone, let records, let reason):
                try container.encode("zoneLeft", forKey: .event)
                try container.encode(zone.description, forKey: .zone)
                try container.encode(records, forKey: .count)
                try container.encode(reason, forKey: .reason)
            case .remoteReset(let reset):
                try container.encode("remoteReset", forKey: .event)
                try container.encode(reset.kind.rawValue, forKey: .kind)
                try container.encode(reset.message, forKey: .reason)
            case .schemaDrift(let table, let column):
                try container.encode("schemaDrift", forKey: .event)
                try container.encode(table, forKey: .table)
                try container.encode(column, forKey: .column)
            case .movedOut(let table, let count):
                try container.encode("movedOut", forKey: .event)
                try container.encode(table, forKey: .table)
                try container.encode(count, forKey: .count)
            case .finished:
                break
            }
        }
    }
}

extension CloudSyncSummary {
    /// `uploaded 2, fetched 1, conflicts 1, parked 0, pending 0` plus the
    /// conflicts and parked records seen (a few), and the failure if any.
    func textLine(details: [CloudSyncEvent]) -> String {
        var line = "uploaded \(uploaded), fetched \(fetched), conflicts \(conflicts), parked \(parked), pending \(pending)"
        var notes: [String] = []
        for event in details {
            switch event {
            case .conflict(let table, let record, let outcome): notes.append("conflict \(table)/\(record): \(outcome.text)")
            case .parked(let table, let record, let reason): notes.append("parked \(table)/\(record): \(reason)")
            case .remoteReset(let reset): notes.append("remote \(reset.kind.rawValue): \(reset.message)")
            case .schemaDrift(let table, let column):
                notes.append("schema drift: table \(table) here lacks column \(column) of the remote's records")
            case .movedOut(let table, let count): notes.append("\(count) rows of \(table) left the subscription")
            default: continue
            }
        }
        if !notes.isEmpty {
            let shown = notes.prefix(5).joined(separator: "; ")
            line += " (" + shown + (notes.count > 5 ? "; and \(notes.count - 5) more" : "") + ")"
        }
        line += String(format: " in %.2f s", finishedAt.timeIntervalSince(startedAt))
        if let error { line += "; failed: \(error)" }
        return line
    }
}

extension CloudConflictOutcome {
    /// What the policy did, in words.
    var text: String {
        switch self {
        case .server: return "the remote's version kept"
        case .client: return "this group's version kept"
        case .merged: return "merged"
        case .deleted: return "deleted"
        }
    }
}
