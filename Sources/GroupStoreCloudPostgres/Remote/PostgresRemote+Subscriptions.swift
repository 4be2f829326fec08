#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO
    import Synchronization

    extension PostgresRemote {
        /// ``fetchChanges(in:since:limit:keeping:)`` narrowed to
        /// `subscription` (see ``CloudSubscription``), each filter evaluated by
        /// the server on the typed table, as the user, inside its row-level
        /// security: a listing lists the rows in the subset; a feed page sends
        /// a record changed since the token if it is in the subset now, its
        /// delete if it was in it at the token, and it in `movedOut` if it was
        /// then and is not now. What it was at the token is what the change log
        /// keeps of it before its first change after the token
        /// (``PostgresServerSchema/subscriptions``, format 7).
        ///
        /// - Throws: ``CloudSyncError/Code/invalidConfiguration`` for a filter
        ///   naming a column the server's table lacks, or one the server cannot
        ///   evaluate on it (a literal of the wrong type: `site = 'north'` on a
        ///   `bigint` column), naming the table; as ``fetchChanges(in:since:limit:keeping:)``.
        public func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?, subscription: CloudSubscription
        ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
            try subscription.refusingClaims(on: displayName)
            let subset = PostgresSubset(subscription: subscription, claims: [:])
            let (answer, heldBack) = try await fetchChanges(in: zone, since: token, limit: limit, keeping: mark, as: nil, subset: subset)
            poll.fetched(heldBack: heldBack) { [hints] in hints.yield() }
            return answer
        }

        /// Of these records, those live, readable by this role and in
        /// `subscription`'s subset (see ``CloudDatabase/selected(_:subscription:)``).
        public func selected(_ ids: [CloudRecordID], subscription: CloudSubscription) async throws -> Set<CloudRecordID> {
            try subscription.refusingClaims(on: displayName)
            return try await selected(ids, as: nil, subset: PostgresSubset(subscription: subscription, claims: [:]))
        }

        /// ``selected(_:subscription:)`` as `role` (`nil`: the login role):
        /// one query a zone and type, under the table's row-level security.
        func selected(_ ids: [CloudRecordID], as role: String?, subset: PostgresSubset) async throws -> Set<CloudRecordID> {
            guard !ids.isEmpty else { return [] }
            return try await perform("select records", as: role) { session in
                let catalog = try await tables(ids.map(\.type), session)
                try await checkFilters(subset, catalog: catalog, session)
                let groups = Dictionary(grouping: ids) { GroupKey(zone: $0.zone, type: $0.type) }
                var selected = Set<CloudRecordID>()
                for (key, group) in groups {
                    guard let table = PostgresTypedTable.named(key.type, in: catalog) else { continue }
                    var binds = PostgresBindings()
                    binds.append(key.zone.description)
                    binds.append(group.map(\.name))
                    let condition = subset.condition(for: table).map { " AND \($0) IS TRUE" } ?? ""
                    let rows = try await session.cells(
                        PostgresQuery(
                            unsafeSQL: "SELECT gs_name FROM \(table.quoted) WHERE gs_zone = $1 AND gs_name = ANY($2::text[])\(condition)",
                            binds: binds))
                    let found = Set(rows.compactMap { $0.first ?? nil })
                    selected.formUnion(group.filter { found.contains($0.name) })
                }
                return selected
            }
        }

        /// The most subscription conditions a remote remembers having checked.
        static let checkedFiltersKept = 1_000

        private struct GroupKey: Hashable {
            var zone: CloudZone
            var type: String
        }

        /// Refuses, naming the table, a subscribed type's filter that names a
        /// column its typed table lacks, or that the server cannot evaluate on
        /// it (tried once a remote with `LIMIT 0`: parsed and planned, no row
        /// read). A type the server has no table for has no records to match.
        func checkFilters(_ subset: PostgresSubset, catalog: [String: PostgresTypedTable], _ session: PostgresSession) async throws {
            for type in subset.subscription.filters.keys.sorted() {
                guard let table = PostgresTypedTable.named(type, in: catalog),
                    let filter = subset.subscription.filter(for: type, claims: subset.claims)
                else { continue }
                try filter.check(columns: table.columns.map(\.name), table: table.name)
                guard let condition = subset.condition(for: table) else { continue }
                let key = table.name + "\u{0}" + condition
                if state.withLock({ $0.checkedFilters.contains(key) }) { continue }
                do {
                    _ = try await session.cells(
                        PostgresQuery(unsafeSQL: "SELECT 1 FROM \(table.quoted) WHERE \(condition) IS TRUE LIMIT 0"))
                } catch {
                    guard let (state, message) = PostgresFailure.serverError(error), state.hasPrefix("22") || state.hasPrefix("42")
                    else { throw error }
                    throw CloudSyncError(
                        .invalidConfiguration,
                        "the subscription of table \(table.name) cannot be evaluated by \(displayName): \(message) (filter \(filter.canonical))",
                        underlying: error)
                }
                state.withLock { state in
                    // Bounded: through a gateway the filters are any client's text.
                    if state.checkedFilters.count >= Self.checkedFiltersKept { state.checkedFilters.removeAll() }
                    state.checkedFilters.insert(key)
                }
            }
        }
    }
#endif  // Postgres
