import Foundation

/// How a conflict is settled: the same record changed here and on the remote
/// since this group last synced it (an edit against an edit, or against a
/// delete).
public enum CloudConflictPolicy: Sendable, CustomStringConvertible {
    /// The remote's version stays (the default).
    case serverWins
    /// This group's version is kept and uploaded.
    case clientWins
    /// The later edit wins, by when each was committed. Clock rule: an edit
    /// counts as later than the version it edited (its time is raised above
    /// that version's), and the remote never stores a time later than its own
    /// clock; so a clock behind cannot lose to what it has already seen, and a
    /// clock ahead cannot claim the future. A tie goes to the remote. A
    /// delete on the remote carries no time: a local edit against it wins;
    /// a local delete against a remote edit wins only if it is the later.
    case newerWins
    /// Per-field three-way merge against the last version both sides agreed
    /// on: edits to different fields both survive; a field both sides changed
    /// takes the remote's value. An edit against a delete wins.
    case fieldMerge
    /// Your function decides, given the remote's version, this group's and
    /// their ancestor.
    case custom(@Sendable (CloudConflict) -> CloudResolution)

    /// Parses `server-wins`, `client-wins`, `newer-wins`, `field-merge`.
    public init?(name: String) {
        switch name {
        case "server-wins": self = .serverWins
        case "client-wins": self = .clientWins
        case "newer-wins": self = .newerWins
        case "field-merge": self = .fieldMerge
        default: return nil
        }
    }

    public static let names = ["server-wins", "client-wins", "newer-wins", "field-merge"]

    public var description: String {
        switch self {
        case .serverWins: return "server-wins"
        case .clientWins: return "client-wins"
        case .newerWins: return "newer-wins"
        case .fieldMerge: return "field-merge"
        case .custom: return "custom"
        }
    }
}

/// One conflict, as a ``CloudConflictPolicy/custom(_:)`` function sees it.
/// `nil` fields mean the record is deleted on that side (or, for the
/// ancestor, that the two sides never agreed on a version).
public struct CloudConflict: Sendable {
    public var table: String
    public var recordName: String
    public var server: CloudFields?
    public var client: CloudFields?
    public var ancestor: CloudFields?
    public var serverEditedAt: Date?
    public var clientEditedAt: Date
}

/// A custom policy's answer.
public enum CloudResolution: Sendable, Hashable {
    case server
    case client
    /// These fields (merged from both, say).
    case fields(CloudFields)
    case delete
}

/// What a conflict came to, as reported in events.
public enum CloudConflictOutcome: String, Sendable, Hashable, Codable {
    case server, client, merged, deleted
}

enum ConflictResolver {
    /// The resolved fields (`nil`: deleted) and what that means.
    static func resolve(_ conflict: CloudConflict, policy: CloudConflictPolicy) -> (CloudFields?, CloudConflictOutcome) {
        let server = conflict.server
        let client = conflict.client
        switch policy {
        case .serverWins:
            return (server, server == nil ? .deleted : .server)
        case .clientWins:
            return (client, client == nil ? .deleted : .client)
        case .newerWins:
            switch (server, client) {
            case (nil, nil): return (nil, .deleted)
            case (nil, let client?): return (client, .client)
            case (let server?, nil):
                // A delete against an edit the remote timed: the delete wins only if it is later.
                if let serverTime = conflict.serverEditedAt, conflict.clientEditedAt > serverTime { return (nil, .deleted) }
                return (server, .server)
            case (let server?, let client?):
                if let serverTime = conflict.serverEditedAt, conflict.clientEditedAt > serverTime { return (client, .client) }
                return (server, .server)
            }
        case .fieldMerge:
            switch (server, client) {
            case (nil, nil): return (nil, .deleted)
            case (nil, let client?): return (client, .client)
            case (let server?, nil): return (server, .server)
            case (let server?, let client?):
                let ancestor = conflict.ancestor ?? [:]
                var merged = server
                var tookClient = false
                for (column, value) in client {
                    let base = ancestor[column]
                    if value != base && server[column] == base {
                        merged[column] = value
                        tookClient = true
                    }
                }
                return (merged, tookClient ? (merged == client ? .client : .merged) : .server)
            }
        case .custom(let decide):
            switch decide(conflict) {
            case .server: return (server, server == nil ? .deleted : .server)
            case .client: return (client, client == nil ? .deleted : .client)
            case .fields(let fields): return (fields, .merged)
            case .delete: return (nil, .deleted)
            }
        }
    }
}
