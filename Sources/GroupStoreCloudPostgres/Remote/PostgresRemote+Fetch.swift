#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO

    extension PostgresRemote {
        /// The changes of `zone` after `token`, at most `limit` records a page
        /// (and at most ``maxFetchLimit``), read in one repeatable-read
        /// transaction.
        ///
        /// With no token: every live row of the zone's record types, then the
        /// feed from the fence at which the listing began. With a token: the
        /// change log behind the transaction fence — entries whose transaction
        /// is older than every transaction still open (`tx <
        /// pg_snapshot_xmin(pg_current_snapshot())`), in `(tx, seq)` order — so
        /// a transaction that commits late is never skipped; each record changed
        /// once, in its current state. When entries are held back by the fence,
        /// a push hint follows shortly (``FencePoll``: the commit that releases
        /// them may send no notification).
        ///
        /// - Throws: ``CloudSyncError/Code/permissionDenied`` for another user's
        ///   private zone or a shared zone not shared with this role;
        ///   ``CloudSyncError/Code/tokenExpired`` for a token of
        ///   another server (set up again, or restored), from before the pruned
        ///   log (`groupstore.compact_log`), ahead of the log, or unreadable.
        public func fetchChanges(in zone: CloudZone, since token: CloudChangeToken?, limit: Int) async throws -> CloudChangeBatch {
            let (batch, heldBack) = try await fetchChanges(in: zone, since: token, limit: limit, as: nil)
            poll.fetched(heldBack: heldBack) { [hints] in hints.yield() }
            return batch
        }

        /// ``fetchChanges(in:since:limit:)`` with `groupstore.history` read in
        /// the page's transaction, from its snapshot, in a statement the page
        /// sends anyway (the feed's; for a listing, the one setting the
        /// settings): no round trip of its own; a token refused as expired has
        /// the history read to tell a server replaced or restored.
        public func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?
        ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
            let (answer, heldBack) = try await fetchChanges(in: zone, since: token, limit: limit, keeping: mark, as: nil)
            poll.fetched(heldBack: heldBack) { [hints] in hints.yield() }
            return answer
        }

        /// `fetchChanges(in:since:limit:keeping:)` as `role` (`nil`: the login
        /// role), narrowed to `subset`, and whether entries after the page are
        /// held back by the fence.
        func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?, as role: String?,
            subset: PostgresSubset = .whole
        ) async throws -> (CloudHistoryChecked<CloudChangeBatch>, heldBack: Bool) {
            let history = HistoryGuard(mark: mark, display: displayName)
            do {
                let (batch, heldBack) = try await fetchChanges(
                    in: zone, since: token, limit: limit, as: role, history: history, subset: subset)
                guard let found = history.answered else { preconditionFailure("a fetch reads the history it was given") }
                // The page's tags and token carry the epoch cached when it was read: one the server no longer
                // has (set up again since) makes a page of no use, even for a mark of the new epoch.
                if let built = noteEpoch(found.head.epoch), built != found.head.epoch, found.keepsMark {
                    throw CloudSyncError(.transient, "\(displayName) was set up again while \(zone) was read; fetch again")
                }
                return (CloudHistoryChecked(value: found.keepsMark ? batch : nil, history: found), heldBack)
            } catch let error as CloudSyncError where error.code == .tokenExpired {
                let found = try await self.history(keeping: mark, as: role)
                guard !found.keepsMark else { throw error }
                return (CloudHistoryChecked(value: nil, history: found), false)
            }
        }

        /// The changes of `zone` after `token` as `role` (`nil`: the login
        /// role), and whether entries after them are held back by the fence (the
        /// caller then fetches again shortly); `history`: read the history in
        /// the same transaction, into it; `subset`: the records asked for.
        func fetchChanges(
            in zone: CloudZone, since token: CloudChangeToken?, limit: Int, as role: String?, history: HistoryGuard? = nil,
            subset: PostgresSubset = .whole
        ) async throws -> (CloudChangeBatch, heldBack: Bool) {
            try await perform("fetch changes", as: role) { session in
                let user = try await user(session)
                if zone.scope == .private, zone.owner != user {
                    throw CloudSyncError(
                        .permissionDenied, "\(zone) is another user's private zone; \(user) may not read it from \(displayName)")
                }
                if zone.scope == .shared, try await access(to: zone, session) == nil {
                    guard try await roleExists(zone.owner, session) else {
                        throw CloudSyncError(
                            .invalidConfiguration,
                            "\(zone) cannot exist on \(displayName): there is no role \(String(reflecting: zone.owner))")
                    }
                    throw CloudSyncError(.permissionDenied, "\(zone) is not shared with \(user) on \(displayName)")
                }
                let epoch = try await epoch(session)
                var start: PostgresChangeToken?
                if let token {
                    guard let parsed = PostgresChangeToken(token) else {
                        throw CloudSyncError(
                            .tokenExpired, "the change token of \(zone) is not one of \(displayName); fetch the zone again")
                    }
                    guard parsed.epoch == epoch else {
                        throw CloudSyncError(
                            .tokenExpired,
                            "the change token of \(zone) was issued by another GroupStore schema than the one on \(displayName) (set up again?); fetch the zone again"
                        )
                    }
                    start = parsed
                }
                let limit = min(max(1, limit), Self.maxFetchLimit)
                // A listing reads typed tables in key order; the feed reads the log its own way.
                let isFeed: Bool
                if case .position = start { isFeed = true } else { isFeed = false }
                let catalog = try await tables([], session)
                try await checkFilters(subset, catalog: catalog, session)
                // The history read from the page's snapshot: in the feed's statement, or for a listing
                // with the settings (acting as a role, that is a statement of its own).
                return try await session.transaction(
                    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", readsInKeyOrder: !isFeed,
                    reading: isFeed ? nil : history.map { HistoryGuard.historyRead($0.mark) }
                ) { transaction in
                    let page: (CloudChangeBatch, Bool)
                    switch start {
                    case .none:
                        let fence = try await fence(transaction)
                        page = try await list(
                            zone, catalog: catalog, epoch: epoch, fence: fence, type: "", after: "", limit: limit, subset: subset,
                            transaction)
                    case .listing(_, let fence, let type, let after):
                        page = try await list(
                            zone, catalog: catalog, epoch: epoch, fence: fence, type: type, after: after, limit: limit, subset: subset,
                            transaction)
                    case .position(_, let tx, let seq):
                        page = try await feed(
                            zone, epoch: epoch, tx: tx, seq: seq, limit: limit, subset: subset, history: history, transaction)
                    }
                    if let history, !isFeed { try history.read(try await transaction.firstRead()) }
                    return page
                }
            }
        }

        private func fence(_ transaction: PostgresTransaction) async throws -> String {
            let rows = try await transaction.cells("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")
            return (rows.first?.first ?? nil) ?? "0"
        }

        /// A page of a full listing: live rows (of a subscribed type, those in
        /// the subset) by type, then by name.
        private func list(
            _ zone: CloudZone, catalog: [String: PostgresTypedTable], epoch: String, fence: String, type: String, after: String, limit: Int,
            subset: PostgresSubset, _ transaction: PostgresTransaction
        ) async throws -> (CloudChangeBatch, Bool) {
            let types = catalog.values.filter { $0.scope == zone.scope && $0.name >= type }.sorted { $0.name < $1.name }
            var changed: [CloudRecord] = []
            for table in types {
                let from = table.name == type ? after : ""
                var binds = PostgresBindings()
                binds.append(zone.description)
                binds.append(from)
                binds.append(String(limit - changed.count + 1))
                let rows = try await transaction.cells(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT \(table.selectList) FROM \(table.quoted)
                            WHERE gs_zone = $1 AND gs_name > $2\(subset.condition(for: table).map { " AND \($0) IS TRUE" } ?? "")
                            ORDER BY gs_name LIMIT $3::bigint
                            """, binds: binds))
                for row in rows {
                    if changed.count == limit {
                        // The page ended with the previous table: nothing of this one was delivered yet.
                        let last = changed.last!.id
                        let next = PostgresChangeToken.listing(
                            epoch: epoch, fence: fence, type: table.name, after: last.type == table.name ? last.name : "")
                        return (CloudChangeBatch(changed: changed, deleted: [], token: next.token, moreComing: true), false)
                    }
                    changed.append(try table.record(row, zone: zone, epoch: epoch))
                }
            }
            let next = PostgresChangeToken.position(epoch: epoch, tx: fence, seq: 0)
            return (CloudChangeBatch(changed: changed, deleted: [], token: next.token, moreComing: false), false)
        }

        /// A page of the change log behind the fence: each record at its last
        /// entry there only, so it comes once, in its current state, even
        /// across pages.
        ///
        /// Two flights: the page (`groupstore.feed`, which answers the log's
        /// horizon and whether entries are held back by the fence with it, and
        /// with `history`, `groupstore.history` beside each row, read into
        /// it); then the rows of the records named, with COMMIT behind them.
        private func feed(
            _ zone: CloudZone, epoch: String, tx: String, seq: Int64, limit: Int, subset: PostgresSubset, history: HistoryGuard?,
            _ transaction: PostgresTransaction
        ) async throws -> (CloudChangeBatch, Bool) {
            var binds = PostgresBindings()
            binds.append(zone.description)
            binds.append(tx)
            binds.append(String(seq))
            binds.append(String(limit + 1))
            let feed = "groupstore.feed($1, $2::xid8, $3::bigint, $4::bigint)"
            var sql = "SELECT * FROM \(feed)"
            if let history {
                binds.append(String(history.mark?.position ?? 0))
                sql = """
                    SELECT f.o_tx, f.o_seq, f.o_type, f.o_name, h.* FROM \(feed) WITH ORDINALITY AS f,
                    groupstore.history($5::bigint) AS h ORDER BY f.ordinality
                    """
            }
            var answer = try await transaction.cells(PostgresQuery(unsafeSQL: sql, binds: binds))
            if let history {
                try history.read(answer.first.map { [Array($0.dropFirst(4))] } ?? [])
                answer = answer.map { Array($0.prefix(4)) }
            }
            guard let header = answer.first, header.count == 4 else {
                throw CloudSyncError(
                    .badRemote,
                    "the server \(displayName) answered a feed without its header: run `groupstore cloud setup --remote URL` to repair it")
            }
            let horizonTx = UInt64(header[0] ?? "0") ?? 0
            let horizonSeq = Int64(header[1] ?? "0") ?? 0
            let head = Int64(header[2] ?? "0") ?? 0
            let position = UInt64(tx) ?? 0
            if (position, seq) < (horizonTx, horizonSeq) {
                throw CloudSyncError(
                    .tokenExpired, "the change token of \(zone) is older than \(displayName) keeps changes for; fetch the zone again")
            }
            if seq > head {
                throw CloudSyncError(
                    .tokenExpired,
                    "the change token of \(zone) is ahead of \(displayName) (restored from an older copy?); fetch the zone again")
            }
            let entries = answer.dropFirst()
            let moreComing = entries.count > limit
            let heldBack = !moreComing && header[3] == "true"
            var last = (tx: tx, seq: seq)
            // Each record once, at its last position in the page.
            var order: [String: Int] = [:]
            var names: [String: [String]] = [:]
            var keys: [(type: String, name: String)] = []
            var counter = 0
            for entry in entries.prefix(limit) {
                guard let entryTx = entry[0], let entrySeq = entry[1].flatMap({ Int64($0) }), let type = entry[2], let name = entry[3]
                else { continue }
                last = (entryTx, entrySeq)
                let key = type + "\u{0}" + name
                if order[key] == nil {
                    names[type, default: []].append(name)
                    keys.append((type, name))
                }
                counter += 1
                order[key] = counter
            }
            let known = try await tables(names.keys, transaction)
            // Of a subscribed type, the records in the subset now are read whole, and of the others
            // only those that were in it at the token, by name (moved out if live, else deleted).
            var reads: [(PostgresTypedTable, EventLoopFuture<PostgresQueryResult>)] = []
            var lefts: [EventLoopFuture<PostgresQueryResult>] = []
            var subscribed: Set<String> = []
            for (type, typeNames) in names {
                guard let table = known[type] else { continue }
                let condition = subset.condition(for: table)
                if condition != nil { subscribed.insert(type) }
                var binds = PostgresBindings()
                binds.append(zone.description)
                binds.append(typeNames)
                let inSubset = condition.map { " AND \($0) IS TRUE" } ?? ""
                reads.append(
                    (
                        table,
                        transaction.send(
                            PostgresQuery(
                                unsafeSQL:
                                    "SELECT \(table.selectList) FROM \(table.quoted) WHERE gs_zone = $1 AND gs_name = ANY($2::text[])\(inSubset)",
                                binds: binds))
                    ))
                if let condition {
                    lefts.append(
                        transaction.send(PostgresSubset.left(table, condition, zone: zone, type: type, names: typeNames, tx: tx, seq: seq)))
                }
            }
            transaction.sendCommit()
            var live: [String: CloudRecord] = [:]
            for (table, read) in reads {
                for row in try await Self.cells(read) {
                    let record = try table.record(row, zone: zone, epoch: epoch)
                    live[table.name + "\u{0}" + record.id.name] = record
                }
            }
            // Of subscribed types, the records that left the subset: live (moved out) or not (deleted).
            var left: [String: Bool] = [:]
            for read in lefts {
                for row in try await Self.cells(read) where row.count == 3 {
                    if let type = row[0], let name = row[1] { left[type + "\u{0}" + name] = row[2] == "true" }
                }
            }
            var changed: [(Int, CloudRecord)] = []
            var deleted: [(Int, CloudRecordID)] = []
            var movedOut: [(Int, CloudRecordID)] = []
            for (type, name) in keys {
                let key = type + "\u{0}" + name
                let id = CloudRecordID(zone: zone, type: type, name: name)
                if let record = live[key] {
                    changed.append((order[key]!, record))
                } else if let isLive = left[key] {
                    if isLive { movedOut.append((order[key]!, id)) } else { deleted.append((order[key]!, id)) }
                } else if !subscribed.contains(type) {
                    deleted.append((order[key]!, id))
                }
            }
            let next = PostgresChangeToken.position(epoch: epoch, tx: last.tx, seq: last.seq)
            return (
                CloudChangeBatch(
                    changed: changed.sorted { $0.0 < $1.0 }.map(\.1), deleted: deleted.sorted { $0.0 < $1.0 }.map(\.1),
                    movedOut: movedOut.sorted { $0.0 < $1.0 }.map(\.1), token: next.token, moreComing: moreComing),
                heldBack
            )
        }
    }
#endif  // Postgres
