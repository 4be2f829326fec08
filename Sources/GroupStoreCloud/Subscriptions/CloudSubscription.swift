import Foundation

/// What a host asks a remote for: of each subscribed record type, only the
/// records its filter holds (``CloudFilter``); of the other types, every
/// record. A remote evaluates it inside what the user may read anyway, so
/// it only ever narrows that.
///
/// A remote given a subscription answers a fetch with the changes of the
/// records in the subset now (in ``CloudChangeBatch/changed``), the deletes
/// of records that were in it at the token, and, in
/// ``CloudChangeBatch/movedOut``, the records that were in it at the token
/// and are not now: the host removes them, as rows no longer its own to
/// hold, never as deletes to upload.
public struct CloudSubscription: Hashable, Sendable {
    /// The filter of each subscribed record type, by type name in lower case.
    public var filters: [String: CloudFilter]
    /// The values of the filters' `param(…)` (a missing one is `NULL`).
    public var parameters: [String: CloudValue]

    /// - Parameter filters: by record type (table) name, any case.
    public init(filters: [String: CloudFilter] = [:], parameters: [String: CloudValue] = [:]) {
        self.filters = Dictionary(filters.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.parameters = parameters
    }

    /// No type is subscribed: every record, as without a subscription.
    public var isEmpty: Bool { filters.isEmpty }

    /// The filter of `type`, its parameters and the given claims bound
    /// (`nil`: the type is not subscribed). What a remote evaluates.
    package func filter(for type: String, claims: [String: CloudValue]) -> CloudFilter? {
        filters[type.lowercased()]?.binding(claims: claims, parameters: parameters)
    }

    /// Refuses a filter that reads `claim(…)`: only a gateway binds claims,
    /// from the token it verified; `remote`, reached directly, has none.
    package func refusingClaims(on remote: String) throws {
        for type in filters.keys.sorted() {
            guard let claim = filters[type]?.claims.sorted().first else { continue }
            throw CloudSyncError(
                .invalidConfiguration,
                "the subscription of table \(type) reads claim('\(claim)'), which only a gateway gives (from the token it verified); "
                    + "\(remote) is not one: use param('\(claim)')")
        }
    }

    /// This subscription within `restrictions` (by type name, any case):
    /// each restricted type's filter is its own AND the restriction's (the
    /// restriction alone for a type not subscribed here), so whatever a
    /// client asks for, it reads no record outside them: what a gateway does
    /// with a token's `where` claim. A restriction reads no `param(…)` (the
    /// client's parameters are bound into the whole).
    package func restricted(by restrictions: [String: CloudFilter]) -> CloudSubscription {
        var copy = self
        for (type, restriction) in restrictions {
            let type = type.lowercased()
            copy.filters[type] = filters[type].map { CloudFilter.both($0, restriction) } ?? restriction
        }
        return copy
    }

    /// The filter of `type` with its parameters bound and its claims kept:
    /// what the host asks for (and keeps, to tell when it changes).
    func boundFilter(for type: String) -> CloudFilter? {
        filters[type.lowercased()]?.binding(parameters: parameters)
    }

    /// This subscription narrowed to `types` (a zone's).
    func restricted(to types: Set<String>) -> CloudSubscription {
        var copy = self
        copy.filters = filters.filter { types.contains($0.key) }
        return copy
    }
}
