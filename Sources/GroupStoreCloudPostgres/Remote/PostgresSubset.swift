#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO

    /// A subscription (``CloudSubscription``) as PostgreSQL evaluates it: each
    /// subscribed type's filter, its claims bound, as a condition on the
    /// columns of the type's typed table. The queries that use it run as the
    /// user's role, so the table's row-level security applies first and a
    /// filter only narrows what the user may read.
    struct PostgresSubset: Sendable {
        let subscription: CloudSubscription
        /// The verified claims a gateway binds to `claim(…)` (none on a
        /// direct connection: a filter's claims are then `NULL`).
        let claims: [String: CloudValue]

        /// Every record, as without a subscription.
        static let whole = PostgresSubset(subscription: CloudSubscription(), claims: [:])

        var isEmpty: Bool { subscription.isEmpty }

        /// The filter of `table`'s type as a boolean SQL expression on its
        /// columns, unqualified; `nil`: the type is not subscribed. The
        /// columns were checked by ``PostgresRemote/checkFilters(_:catalog:_:)``.
        func condition(for table: PostgresTypedTable) -> String? {
            guard let filter = subscription.filter(for: table.name, claims: claims) else { return nil }
            let columns = Dictionary(table.columns.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
            let sql = FilterSQL(
                dialect: .postgres, column: { PostgresTypedTable.quote(columns[$0.lowercased()]?.name ?? $0) },
                kind: { columns[$0.lowercased()]?.type.kind })
            return sql.sql(filter)
        }

        /// Of the records `names` of type `type` in `zone`, those that may
        /// have been in the subset since the token (`tx`, `seq`) and are not
        /// now: each with whether it is live (moved out) or not (deleted).
        /// What a record was is what each of its change-log entries after the
        /// token keeps of it before that change (`previous`; an insert keeps
        /// nothing), `condition` evaluated on each: any of them in the subset
        /// counts. Not only the first: a host's listing, or a page, may
        /// already hold a version logged after the token (one committed by a
        /// transaction the fence held back). A record the host never held may
        /// be sent too; removing it there does nothing. Answers type, name,
        /// and `true` (live) or `false`.
        static func left(
            _ table: PostgresTypedTable, _ condition: String, zone: CloudZone, type: String, names: [String], tx: String, seq: Int64
        ) -> PostgresQuery {
            var binds = PostgresBindings()
            binds.append(zone.description)
            binds.append(type)
            binds.append(names)
            binds.append(tx)
            binds.append(String(seq))
            // The filter's columns, unqualified, read gs_r's in the scalar subquery (the innermost
            // scope), and t's outside it (b's own columns are named so that no table column is).
            return PostgresQuery(
                unsafeSQL: """
                    SELECT $2::text, b.gs_entry_name, (t.gs_name IS NOT NULL)::text
                    FROM (
                      SELECT c.name AS gs_entry_name,
                        bool_or((SELECT \(condition) IS TRUE FROM jsonb_populate_record(NULL::\(table.quoted), c.previous) AS gs_r))
                          AS gs_entry_was_in
                      FROM groupstore.change_log AS c
                      WHERE c.zone = $1 AND c.type = $2 AND c.name = ANY($3::text[]) AND (c.tx, c.seq) > ($4::xid8, $5::bigint)
                        AND c.previous IS NOT NULL
                      GROUP BY c.name) AS b
                    LEFT JOIN \(table.quoted) AS t ON t.gs_zone = $1 AND t.gs_name = b.gs_entry_name
                    WHERE b.gs_entry_was_in AND NOT (t.gs_name IS NOT NULL AND \(condition) IS TRUE)
                    """, binds: binds)
        }
    }

    extension PostgresColumnType {
        /// The kind of value the column holds, for a filter's literals.
        var kind: CloudColumn.Kind {
            switch self {
            case .text: .text
            case .bigint: .integer
            case .double: .real
            case .boolean: .boolean
            case .timestamp: .date
            case .bytea: .blob
            case .jsonb: .any
            }
        }
    }
#endif  // Postgres
