import Foundation
import GroupStoreCloud

/// The gateway's protocol, shared by the client (``GatewayRemote``) and the
/// server (`GroupStoreGateway`): JSON bodies over HTTP/1.1, one `POST` (or
/// `GET`/`PUT`) per remote operation, a bearer token on each, push hints on a
/// WebSocket. Versioned in the path (`/v1/…`).
///
/// | operation | request | answer |
/// |---|---|---|
/// | `POST /v1/account` | — | ``Account`` |
/// | `POST /v1/history` | ``HistoryRequest`` | ``History`` |
/// | `POST /v1/prepare` | `[CloudRecordType]` | `{}` |
/// | `POST /v1/modify` | `[Change]` | `[Result]` |
/// | `POST /v1/modify-checked` | ``ModifyRequest`` | ``ModifyAnswer`` |
/// | `POST /v1/fetch` | ``FetchRequest`` | ``Batch`` |
/// | `POST /v1/forgotten` | `[Tagged]` | `[CloudRecordID]` |
/// | `POST /v1/assets/missing` | `[String]` (hashes) | `[String]` |
/// | `PUT /v1/assets/HASH` | the bytes | `{}` |
/// | `GET /v1/assets/HASH` | — | the bytes |
/// | `POST /v1/share` | ``ShareRequest`` | `{}` |
/// | `GET /v1/shares` | — | `[CloudShare]` |
/// | `GET /v1/push` | WebSocket | ``PushMessage`` frames (and ``Prefetch``) |
///
/// A failure answers a status (400 invalid, 401 not authenticated — a
/// bearer token missing, expired or otherwise refused —, 403 refused, 410
/// change token expired (the zone is listed again: never a bearer token's
/// expiry), 413 too large, 422 refused for good, 429 slow down with
/// `Retry-After`, 503 for now, 502 the database failed) and an ``ErrorBody``.
/// A push connection the gateway refuses is accepted and closed at once
/// with a ``PushCloseCode`` and the sentence as the close reason.
package enum GatewayWire {
    package static let apiPrefix = "/v1"
    /// The header naming the client's origin (what its writes' notifications
    /// carry, so its own are told apart on the push connection).
    package static let originHeader = "GroupStore-Origin"
    /// The most bytes a request body may have (an asset's bytes or a batch),
    /// unless the server is told otherwise.
    package static let defaultMaxBodyBytes = 8 * 1024 * 1024
    /// The most bytes a push connection's frame may have (a hint with a
    /// larger page goes without it).
    package static let maxPushBytes = 1 << 16

    package struct Account: Codable, Sendable {
        package var user: String
        package init(user: String) { self.user = user }
    }

    /// What ``CloudDatabase/history(keeping:)`` asks: whether `mark` is still
    /// part of the remote's history.
    package struct HistoryRequest: Codable, Sendable, Equatable {
        package var mark: CloudHistoryMark?
        package init(mark: CloudHistoryMark?) { self.mark = mark }
    }

    /// A ``CloudRemoteHistory`` on the wire (`now`: seconds since the reference date).
    package struct History: Codable, Sendable {
        package var head: CloudHistoryMark
        package var keepsMark: Bool
        package var now: Double

        package init(_ history: CloudRemoteHistory) {
            head = history.head
            keepsMark = history.keepsMark
            now = history.now.timeIntervalSinceReferenceDate
        }

        package var history: CloudRemoteHistory {
            CloudRemoteHistory(head: head, keepsMark: keepsMark, now: Date(timeIntervalSinceReferenceDate: now))
        }
    }

    /// A ``CloudRecordChange`` on the wire.
    package struct Change: Codable, Sendable {
        package var delete: Bool
        package var id: CloudRecordID
        package var baseTag: String?
        package var fields: CloudFields?
        /// Seconds since the reference date (`Date`'s own value, exactly).
        package var editedAt: Double
        /// A save bringing back a version the remote forgot; sent only when
        /// true. A gateway of an older build ignores it (and creates the
        /// record over a later delete, as before).
        package var bringsBack: Bool?

        package init(_ change: CloudRecordChange) {
            switch change {
            case .save(let id, let baseTag, let fields, let editedAt, let bringsBack):
                self.init(
                    delete: false, id: id, baseTag: baseTag, fields: fields, editedAt: editedAt.timeIntervalSinceReferenceDate,
                    bringsBack: bringsBack ? true : nil)
            case .delete(let id, let baseTag, let editedAt):
                self.init(
                    delete: true, id: id, baseTag: baseTag, fields: nil, editedAt: editedAt.timeIntervalSinceReferenceDate, bringsBack: nil)
            }
        }

        private init(delete: Bool, id: CloudRecordID, baseTag: String?, fields: CloudFields?, editedAt: Double, bringsBack: Bool?) {
            self.delete = delete
            self.id = id
            self.baseTag = baseTag
            self.fields = fields
            self.editedAt = editedAt
            self.bringsBack = bringsBack
        }

        package var change: CloudRecordChange {
            let date = Date(timeIntervalSinceReferenceDate: editedAt)
            return delete
                ? .delete(id: id, baseTag: baseTag, editedAt: date)
                : .save(id: id, baseTag: baseTag, fields: fields ?? [:], editedAt: date, bringsBack: bringsBack ?? false)
        }
    }

    /// A ``CloudModifyResult`` on the wire.
    package struct Result: Codable, Sendable {
        package enum Kind: String, Codable, Sendable { case saved, deleted, conflict, refused }
        package var kind: Kind
        package var id: CloudRecordID
        package var record: CloudRecord?
        package var reason: String?
        /// A conflict with a deleted record: the delete's edit time (seconds
        /// since the reference date, as a change's `editedAt`), where the
        /// remote knows it. Absent — as from a gateway of an older build — it
        /// is unknown; a peer of an older build ignores it.
        package var deletedAt: Double?

        package init(_ result: CloudModifyResult) {
            record = nil
            reason = nil
            deletedAt = nil
            switch result {
            case .saved(let saved):
                kind = .saved
                id = saved.id
                record = saved
            case .deleted(let deleted):
                kind = .deleted
                id = deleted
            case .conflict(let conflicted, let server, let deleted):
                kind = .conflict
                id = conflicted
                record = server
                deletedAt = server == nil ? deleted?.timeIntervalSinceReferenceDate : nil
            case .refused(let refused, let why):
                kind = .refused
                id = refused
                reason = why
            }
        }

        package var result: CloudModifyResult? {
            switch kind {
            case .saved: return record.map { .saved($0) }
            case .deleted: return .deleted(id)
            case .conflict:
                return .conflict(
                    id, server: record, deletedAt: record == nil ? deletedAt.map(Date.init(timeIntervalSinceReferenceDate:)) : nil)
            case .refused: return .refused(id, reason: reason ?? "refused")
            }
        }
    }

    /// What ``CloudDatabase/modify(_:keeping:)`` asks: the changes, made on
    /// condition that `mark` is part of the remote's history.
    package struct ModifyRequest: Codable, Sendable {
        package var changes: [Change]
        package var mark: CloudHistoryMark?
        package init(changes: [Change], mark: CloudHistoryMark?) {
            self.changes = changes
            self.mark = mark
        }
    }

    /// The answer to a ``ModifyRequest``: the results (absent: the mark is
    /// not part of the history, nothing was made) and the history after them.
    package struct ModifyAnswer: Codable, Sendable {
        package var results: [Result]?
        package var history: History
        package init(results: [Result]?, history: History) {
            self.results = results
            self.history = history
        }
    }

    /// What a fetch asks; with `history`, the page is read on condition that
    /// its mark is part of the remote's history, and the answer carries the
    /// history (a gateway of an older build ignores it and answers none).
    package struct FetchRequest: Codable, Sendable, Equatable {
        package var zone: CloudZone
        package var token: CloudChangeToken?
        package var limit: Int
        package var history: HistoryRequest?
        package init(zone: CloudZone, token: CloudChangeToken?, limit: Int, history: HistoryRequest? = nil) {
            self.zone = zone
            self.token = token
            self.limit = limit
            self.history = history
        }
    }

    /// A ``CloudChangeBatch`` on the wire, and whether changes after it are
    /// held back by the server's transaction fence (fetch again shortly).
    package struct Batch: Codable, Sendable {
        package var changed: [CloudRecord]
        package var deleted: [CloudRecordID]
        package var token: CloudChangeToken
        package var moreComing: Bool
        package var heldBack: Bool
        /// Asked for (``FetchRequest/history``): the remote's history; when it
        /// does not keep the mark, the page is empty and is not to be used.
        package var history: History?
        /// The records that left the subscription's subset (a subscribed
        /// fetch only; absent from a plain one).
        package var movedOut: [CloudRecordID]?

        package init(_ batch: CloudChangeBatch, heldBack: Bool, history: History? = nil) {
            changed = batch.changed
            deleted = batch.deleted
            token = batch.token
            moreComing = batch.moreComing
            self.heldBack = heldBack
            self.history = history
            movedOut = batch.movedOut.isEmpty ? nil : batch.movedOut
        }

        package var batch: CloudChangeBatch {
            CloudChangeBatch(changed: changed, deleted: deleted, movedOut: movedOut ?? [], token: token, moreComing: moreComing)
        }
    }

    /// A subscription on the wire (``CloudSubscription``): each subscribed
    /// record type's filter in its own syntax (``CloudFilter/canonical``),
    /// its parameters bound by the client and its `claim(…)` kept, for the
    /// gateway to bind from the verified token. The gateway parses each
    /// filter again: nothing the client sent reaches the database unparsed.
    package struct Subscription: Codable, Sendable, Equatable {
        package var filters: [String: String]

        package init(_ subscription: CloudSubscription) {
            filters = subscription.filters.mapValues { $0.binding(parameters: subscription.parameters).canonical }
        }

        /// The subscription parsed.
        /// - Throws: ``CloudSyncError/Code/invalidConfiguration`` for a filter
        ///   that is not one (``CloudFilter``), naming its table.
        package func parsed() throws -> CloudSubscription {
            var parsed: [String: CloudFilter] = [:]
            for (type, text) in filters {
                do {
                    parsed[type] = try CloudFilter(text)
                } catch let error as CloudSyncError {
                    throw CloudSyncError(.invalidConfiguration, "the subscription of table \(type): \(error.message)", underlying: error)
                }
            }
            return CloudSubscription(filters: parsed)
        }
    }

    /// `/v1/fetch-subscribed`: a fetch narrowed to a subscription.
    package struct SubscribedFetchRequest: Codable, Sendable {
        package var fetch: FetchRequest
        package var subscription: Subscription
        package init(fetch: FetchRequest, subscription: Subscription) {
            self.fetch = fetch
            self.subscription = subscription
        }
    }

    /// `/v1/select`: which of these records are live, readable and in the subscription's subset.
    package struct SelectRequest: Codable, Sendable {
        package var ids: [CloudRecordID]
        package var subscription: Subscription
        package init(ids: [CloudRecordID], subscription: Subscription) {
            self.ids = ids
            self.subscription = subscription
        }
    }

    package struct Tagged: Codable, Sendable {
        package var id: CloudRecordID
        package var tag: String
        package init(id: CloudRecordID, tag: String) {
            self.id = id
            self.tag = tag
        }
    }

    package struct ShareRequest: Codable, Sendable {
        package var zone: String
        package var user: String
        /// `nil`: stop sharing.
        package var access: CloudShareAccess?
        package init(zone: String, user: String, access: CloudShareAccess?) {
            self.zone = zone
            self.user = user
            self.access = access
        }
    }

    /// The body of every failure: a ``CloudSyncError/Code`` by name and one line.
    package struct ErrorBody: Codable, Sendable {
        package var code: String
        package var message: String
        package var retryAfter: Double?
        package init(code: String, message: String, retryAfter: Double? = nil) {
            self.code = code
            self.message = message
            self.retryAfter = retryAfter
        }
    }

    /// A frame on the push connection. The client sends `subscribe` with
    /// the zones it fetches (the server keeps those the token's role may
    /// read, and answers `subscribed` with them); the server sends `hint`
    /// when one of them may have changed (`zones`: those that did, when it
    /// knows; `own`: the change came from this client's own writes).
    ///
    /// The client may also send `prefetch`: the fetch it will make when a
    /// subscribed zone next changes (``Prefetch``). The server then makes
    /// that fetch for it, as its token's identity, when the zone's next
    /// change comes, and sends the page with the hint (`prefetch` and
    /// `answer`), so the client's fetch needs no request of its own. A
    /// prefetch is used once; a gateway of an older build ignores it.
    package struct PushMessage: Codable, Sendable {
        package enum Kind: String, Codable, Sendable { case subscribe, subscribed, hint, prefetch }
        package var type: Kind
        package var zones: [String]?
        package var own: Bool?
        /// `prefetch`: the fetch asked for; a `hint`: the fetch the gateway made.
        package var prefetch: Prefetch?
        /// A `hint`: the page `prefetch` answered, read after the change it hints at.
        package var answer: Batch?

        package init(type: Kind, zones: [String]?, own: Bool?, prefetch: Prefetch? = nil, answer: Batch? = nil) {
            self.type = type
            self.zones = zones
            self.own = own
            self.prefetch = prefetch
            self.answer = answer
        }

        package static func subscribe(_ zones: [CloudZone]) -> PushMessage {
            PushMessage(type: .subscribe, zones: zones.map(\.description).sorted(), own: nil)
        }
        package static func subscribed(_ zones: [CloudZone]) -> PushMessage {
            PushMessage(type: .subscribed, zones: zones.map(\.description).sorted(), own: nil)
        }
        /// A hint; `zones`: those that changed (`nil`: any may have).
        package static func hint(own: Bool, zones: Set<CloudZone>? = nil) -> PushMessage {
            PushMessage(type: .hint, zones: zones.map { $0.map(\.description).sorted() }, own: own)
        }
        package static func prefetch(_ prefetch: Prefetch) -> PushMessage {
            PushMessage(type: .prefetch, zones: nil, own: nil, prefetch: prefetch)
        }
        package static func hint(_ prefetch: Prefetch, answer: Batch) -> PushMessage {
            PushMessage(type: .hint, zones: [prefetch.fetch.zone.description], own: false, prefetch: prefetch, answer: answer)
        }
    }

    /// A fetch the client will make when its zone next changes: `/v1/fetch`
    /// (`subscription` nil) or `/v1/fetch-subscribed`, exactly as it will ask it.
    package struct Prefetch: Codable, Sendable, Equatable {
        package var fetch: FetchRequest
        package var subscription: Subscription?
        package init(fetch: FetchRequest, subscription: Subscription?) {
            self.fetch = fetch
            self.subscription = subscription
        }
    }

    package static func encode(_ value: some Encodable) throws -> Data {
        try JSONEncoder().encode(value)
    }

    package static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }
}

/// The close codes of a push connection that the gateway refuses or ends
/// (WebSocket's private-use range), each with its sentence as the close
/// reason, as the HTTP statuses they stand for.
package enum PushCloseCode {
    /// The token is missing or refused (expired, signed with another key, …): HTTP 401.
    package static let unauthenticated: UInt16 = 4401
    /// The token's role is one the gateway may not act as: HTTP 403.
    package static let refused: UInt16 = 4403
    /// Too many push connections for the role, or `subscribe` frames past its rate: HTTP 429.
    package static let tooMany: UInt16 = 4429
    /// The gateway cannot serve the connection now (its database): HTTP 503.
    package static let unavailable: UInt16 = 4503

    /// The error a close with `code` stands for (`nil`: not a refusal).
    package static func error(code: UInt16, reason: String?) -> CloudSyncError? {
        let sentence = reason.map { "the gateway closed the push connection: \($0)" } ?? "the gateway closed the push connection (\(code))"
        switch code {
        case unauthenticated, refused: return CloudSyncError(.unauthorized, sentence)
        case tooMany: return CloudSyncError(.rateLimited, sentence)
        case unavailable: return CloudSyncError(.transient, sentence)
        default: return nil
        }
    }

    /// `text` cut to what a close frame's reason holds (123 bytes of UTF-8), on a character's edge.
    package static func reason(_ text: String) -> String {
        var reason = ""
        for character in text {
            guard reason.utf8.count + String(character).utf8.count <= 123 else { break }
            reason.append(character)
        }
        return reason
    }
}

/// The status a ``CloudSyncError`` goes back with, and the code a status
/// comes back as when the body names none.
package enum GatewayStatus {
    package static func status(of code: CloudSyncError.Code) -> Int {
        switch code {
        case .invalidConfiguration: return 400
        case .unauthorized: return 401
        case .permissionDenied: return 403
        case .tokenExpired: return 410
        case .batchTooLarge: return 413
        case .scopeChanged, .tableRefused: return 422
        case .rateLimited: return 429
        case .transient, .stopped: return 503
        default: return 502
        }
    }

    package static func code(of status: Int) -> CloudSyncError.Code {
        switch status {
        case 400: return .invalidConfiguration
        case 401: return .unauthorized
        case 403: return .permissionDenied
        case 410: return .tokenExpired
        case 413: return .batchTooLarge
        case 422: return .tableRefused
        case 429: return .rateLimited
        case 500..<600 where status != 501 && status != 505: return .transient
        default: return .badRemote
        }
    }
}
