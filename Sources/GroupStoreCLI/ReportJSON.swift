import Foundation
import GroupStore

/// The JSON the operator commands print, one object per line, encoded here
/// in the CLI (the library hands out plain values).
enum ReportJSON {
    static func line(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// `groupstore status --format json`.
    struct Status: Encodable {
        struct Member: Encodable {
            var name: String
            var live: Bool
            var cursor: Nullable<Int64>
            var behind: Nullable<Int64>
            var payloadFiles: Int
            var holdsBackPruning: Bool
        }
        var directory: String
        var head: Int64
        var prunedThrough: Int64
        var historyTransactions: Int
        var historyChanges: Int
        var pendingPayloadFiles: Int
        var databaseBytes: Int64
        var members: [Member]
        var holdingBack: [String]

        init(_ status: GroupStatus) {
            let holding = Set(status.holdingBack.map(\.name))
            directory = status.directory
            head = status.head
            prunedThrough = status.prunedThrough
            historyTransactions = status.historyTransactions
            historyChanges = status.historyChanges
            pendingPayloadFiles = status.pendingPayloadFiles
            databaseBytes = status.databaseBytes
            members = status.members.map {
                Member(
                    name: $0.name, live: $0.live, cursor: Nullable($0.cursor), behind: Nullable($0.behind),
                    payloadFiles: $0.payloadFiles, holdsBackPruning: holding.contains($0.name))
            }
            holdingBack = status.holdingBack.map(\.name)
        }
    }

    /// `groupstore gc --format json`.
    struct Prune: Encodable {
        struct Holder: Encodable {
            var member: String
            var cursor: Int64
        }
        var prunedThrough: Int64
        var transactionsRemoved: Int
        var changesRemoved: Int
        var payloadFilesRemoved: Int
        var temporaryFilesRemoved: Int
        var heldBackBy: [Holder]

        init(_ report: PruneReport) {
            prunedThrough = report.prunedThrough
            transactionsRemoved = report.transactionsRemoved
            changesRemoved = report.changesRemoved
            payloadFilesRemoved = report.payloadFilesRemoved
            temporaryFilesRemoved = report.temporaryFilesRemoved
            heldBackBy = report.heldBackBy.map { Holder(member: $0.member, cursor: $0.cursor) }
        }
    }

    /// `groupstore retire --format json`.
    struct Retire: Encodable {
        var member: String
        var cursor: Nullable<Int64>
        var filesRemoved: Int

        init(_ report: RetireReport) {
            member = report.member
            cursor = Nullable(report.cursor)
            filesRemoved = report.filesRemoved
        }
    }
}

/// An optional written as JSON `null` when absent (a synthesized `Encodable`
/// leaves an absent optional out, and the contract says `null`).
struct Nullable<Wrapped: Encodable>: Encodable {
    var value: Wrapped?
    init(_ value: Wrapped?) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}
