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
            var cursor: Int64?
            var behind: Int64?
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
                    name: $0.name, live: $0.live, cursor: $0.cursor, behind: $0.behind, payloadFiles: $0.payloadFiles,
                    holdsBackPruning: holding.contains($0.name))
            }
            holdingBack = status.holdingBack.map(\.name)
        }

        func encode(to encoder: any Encoder) throws {
            // `cursor` and `behind` are written as null for members that only write.
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(directory, forKey: .directory)
            try container.encode(head, forKey: .head)
            try container.encode(prunedThrough, forKey: .prunedThrough)
            try container.encode(historyTransactions, forKey: .historyTransactions)
            try container.encode(historyChanges, forKey: .historyChanges)
            try container.encode(pendingPayloadFiles, forKey: .pendingPayloadFiles)
            try container.encode(databaseBytes, forKey: .databaseBytes)
            try container.encode(holdingBack, forKey: .holdingBack)
            var list = container.nestedUnkeyedContainer(forKey: .members)
            for member in members {
                var item = list.nestedContainer(keyedBy: MemberKeys.self)
                try item.encode(member.name, forKey: .name)
                try item.encode(member.live, forKey: .live)
                try item.encode(member.cursor, forKey: .cursor)
                try item.encode(member.behind, forKey: .behind)
                try item.encode(member.payloadFiles, forKey: .payloadFiles)
                try item.encode(member.holdsBackPruning, forKey: .holdsBackPruning)
            }
        }

        private enum Keys: String, CodingKey {
            case directory, head, prunedThrough, historyTransactions, historyChanges, pendingPayloadFiles, databaseBytes, members,
                holdingBack
        }
        private enum MemberKeys: String, CodingKey {
            case name, live, cursor, behind, payloadFiles, holdsBackPruning
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
        var cursor: Int64?
        var filesRemoved: Int

        init(_ report: RetireReport) {
            member = report.member
            cursor = report.cursor
            filesRemoved = report.filesRemoved
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(member, forKey: .member)
            try container.encode(cursor, forKey: .cursor)
            try container.encode(filesRemoved, forKey: .filesRemoved)
        }
        private enum Keys: String, CodingKey { case member, cursor, filesRemoved }
    }
}
