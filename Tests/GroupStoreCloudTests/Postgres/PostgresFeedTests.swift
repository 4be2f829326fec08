#if Postgres
    import Foundation
    import GRDB
    import GroupStore
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import Logging
    import PostgresNIO
    import PostgresTestServer
    import Subprocesses
    import XCTest

    /// The change feed behind the transaction fence, push by LISTEN/NOTIFY, and
    /// plain SQL writers on the server.
    final class PostgresFeedTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .postgres }
        static let schema = "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT, n INTEGER)"
        static let note = CloudRecordType(
            name: "note", scope: .private,
            columns: [
                CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: false, isKey: true),
                CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
                CloudColumn(name: "n", kind: .integer, declaredType: "INTEGER", notNull: false, isKey: false),
            ])

        /// A connection of the test's own, as `user`.
        private func connect(_ user: String) async throws -> PostgresConnection {
            try await PostgresConnection.connect(
                configuration: .init(
                    unixSocketPath: server.socketDirectory + "/.s.PGSQL.\(server.port)", username: user, password: nil, database: "postgres"
                ),
                id: 1, logger: Logger(label: "test"))
        }

        private func names(_ batch: CloudChangeBatch) -> [String] { batch.changed.map(\.id.name).sorted() }

        /// Waits for `signals` to yield once, failing the test after 15 s.
        private func awaitSignal(_ signals: AsyncStream<Void>, _ what: String) async throws {
            _ = try await deadline(15, what) {
                for await _ in signals { return true }
                return nil
            }
        }

        func testATransactionThatStartedFirstAndCommitsLast_isFetched() async throws {
            let remote = try pgRemote()
            _ = try await remote.account()
            try await remote.prepare([Self.note])
            let listing = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 100)
            XCTAssertEqual(listing.changed.count, 0)

            // T1 starts first and writes n1; T2 writes n2 and commits; T1 commits last.
            let first = try await connect("alice")
            defer { Task { try? await first.close() } }
            try await first.query("BEGIN", logger: Logger(label: "test"))
            try await first.query("INSERT INTO note (id, title) VALUES ('n1', 'started first')", logger: Logger(label: "test"))
            try server.psql("INSERT INTO note (id, title) VALUES ('n2', 'committed first')", as: "alice")

            // n2 is held back while T1 is open: its place in the feed is after T1's.
            let held = try await remote.fetchChanges(in: .private("alice"), since: listing.token, limit: 100)
            XCTAssertEqual(names(held), [], "nothing passes the fence while an older transaction is open")
            try await first.query("COMMIT", logger: Logger(label: "test"))
            let after = try await remote.fetchChanges(in: .private("alice"), since: held.token, limit: 100)
            XCTAssertEqual(names(after), ["n1", "n2"], "both, the late commit included")
            let again = try await remote.fetchChanges(in: .private("alice"), since: after.token, limit: 100)
            XCTAssertEqual(names(again), [])
        }

        /// A subscribed listing may hold a row whose insert the fence held
        /// back (committed after an older transaction began): the row's
        /// first entry after the listing's token is that insert, which kept
        /// nothing before it. Its delete later is still sent, as are the
        /// deletes of rows it held at the token.
        func testASubscribedListing_thenTheDeleteOfARowTheFenceHeldBack_isSent() async throws {
            let remote = try pgRemote()
            _ = try await remote.account()
            try await remote.prepare([Self.note])
            let subscription = CloudSubscription(filters: ["note": try CloudFilter("title = 'in'")])
            let older = try await connect("alice")
            defer { Task { try? await older.close() } }
            try await older.query("BEGIN", logger: Logger(label: "test"))
            try await older.query("INSERT INTO note (id, title) VALUES ('n0', 'out')", logger: Logger(label: "test"))
            try server.psql("INSERT INTO note (id, title) VALUES ('n1', 'in')", as: "alice")
            let listed = try await remote.fetchChanges(
                in: .private("alice"), since: nil, limit: 100, keeping: nil, subscription: subscription)
            let listing = try XCTUnwrap(listed.value)
            XCTAssertEqual(names(listing), ["n1"], "the listing sees the committed row the fence holds back from the feed")
            try await older.query("COMMIT", logger: Logger(label: "test"))
            try server.psql("DELETE FROM note WHERE id = 'n1'", as: "alice")
            let fetched = try await remote.fetchChanges(
                in: .private("alice"), since: listing.token, limit: 100, keeping: nil, subscription: subscription)
            let after = try XCTUnwrap(fetched.value)
            XCTAssertEqual(after.deleted.map(\.name), ["n1"], "the delete of the row the listing gave")
            XCTAssertEqual(names(after), [], "n0 was never in the subset")
        }

        func testANotification_carriesTheWritingRemotesOrigin_orNothing_andNothingOfTheRows() async throws {
            let remote = try pgRemote()
            _ = try await remote.account()
            try await remote.prepare([Self.note])
            let listener = try await connect("alice")
            defer { Task { try? await listener.close() } }
            let (payloads, delivered) = AsyncStream.makeStream(of: String.self)
            let (ready, listening) = AsyncStream.makeStream(of: Void.self)
            let listen = Task {
                try await listener.listen(on: "groupstore") { notifications in
                    listening.yield()
                    for try await notification in notifications { delivered.yield(notification.payload) }
                }
            }
            defer { listen.cancel() }
            try await awaitSignal(ready, "LISTEN on the test's connection")
            let note = CloudRecordID(zone: .private("alice"), type: "note", name: "secret-name")
            let saved = try await remote.modify([.save(id: note, baseTag: nil, fields: ["title": .text("secret title")], editedAt: Date())])
            guard case .saved = saved.first else { return XCTFail("the save was not saved: \(saved)") }
            try server.psql("INSERT INTO note (id, title) VALUES ('from-psql', 'by hand')", as: "alice")
            let seen = try await deadline(15, "both notifications") {
                var seen: [String] = []
                for await payload in payloads {
                    seen.append(payload)
                    if seen.count == 2 { return seen }
                }
                return nil
            }
            let notices = seen.map(PostgresNotice.init(payload:))
            XCTAssertEqual(notices.map(\.origin), [remote.origin, ""], "the remote's write carries its origin, psql's nothing")
            // Then the zone's tag: the same zone, named by a keyed hash that says nothing of it.
            XCTAssertEqual(notices[0].tags?.count, 1, "\(seen)")
            XCTAssertEqual(notices[0].tags, notices[1].tags, "\(seen)")
            // As the gateway computes it from the key (PostgresNotice), and as groupstore.hint_tag does.
            let key = try server.psql("SELECT key FROM groupstore.hint_key")
            XCTAssertEqual(notices[0].tags, ["z:" + PostgresNotice.tag(of: "private/alice", key: key)], "\(seen)")
            XCTAssertEqual(notices[0].tags, ["z:" + (try server.psql("SELECT groupstore.hint_tag('private/alice')"))], "\(seen)")
            for payload in seen {
                XCTAssertFalse(payload.contains("secret") || payload.contains("alice") || payload.contains("note"), payload)
            }
        }

        func testAConnectionsLossWatch_keepsNothingForAnsweredStatements_andTellsTheWaitingOnesWhenItCloses() async throws {
            let watch = ConnectionLossWatch()
            let connection = try await connect("alice")
            for _ in 0..<1_000 {
                let token = watch.onClose(of: connection) { XCTFail("an answered statement was told of a loss") }
                _ = try await connection.query("SELECT 1", logger: Logger(label: "test"))
                watch.cancel(token, of: connection)
            }
            XCTAssertEqual(watch.count.connections, 1)
            XCTAssertEqual(watch.count.waiting, 0, "nothing is kept for a statement once answered")
            let (told, tell) = AsyncStream.makeStream(of: Void.self)
            _ = watch.onClose(of: connection) { tell.yield() }
            try await connection.close()
            try await awaitSignal(told, "the waiting statement told of the closed connection")
            XCTAssertEqual(watch.count.connections, 0, "a closed connection is forgotten")
            // A statement on a connection already closed is told at once.
            let (late, tellLate) = AsyncStream.makeStream(of: Void.self)
            _ = watch.onClose(of: connection) { tellLate.yield() }
            try await awaitSignal(late, "a statement on a closed connection told at once")
        }

        func testPushHints_skipTheRemotesOwnWrites_forASoleListenerOnly() async throws {
            /// How many hints each of `listeners` streams gets for one notification from `origin`,
            /// on a remote whose origin is "me".
            func hints(listeners: Int, notificationFrom origin: String) async -> [Int] {
                let hints = PushHints()
                let streams = (0..<listeners).map { _ in hints.stream() }
                hints.yield(from: origin, own: "me")
                hints.finish()
                var counts: [Int] = []
                for stream in streams {
                    var count = 0
                    for await _ in stream { count += 1 }
                    counts.append(count)
                }
                return counts
            }
            let own = await hints(listeners: 1, notificationFrom: "me")
            XCTAssertEqual(own, [0], "a sole listener made the write: no hint")
            let foreign = await hints(listeners: 1, notificationFrom: "")
            XCTAssertEqual(foreign, [1], "another writer's notification is a hint")
            let shared = await hints(listeners: 2, notificationFrom: "me")
            XCTAssertEqual(shared, [1, 1], "with two listeners the write may be the other's: both are hinted")
        }

        func testAHeldBackFetch_completesWithoutANotify() async throws {
            let b = try open("b", schema: Self.schema)
            let bSaves = b.saves()
            try await b.start()
            var configuration = try configuration("b", tables: ["note"])
            configuration.fetchInterval = 3_600  // only push hints (and the remote's polls) start a sync
            let sync = CloudSync(configuration)
            let events = sync.events()
            let running = Task { try await sync.run() }
            defer { running.cancel() }
            _ = try await deadline(30, "the bridge's first sync") {
                for await event in events { if case .finished = event { return true } }
                return nil
            }
            // An open transaction that writes nothing synced holds the fence back; its commit notifies nobody.
            let holder = try await connect("alice")
            defer { Task { try? await holder.close() } }
            try await holder.query("BEGIN", logger: Logger(label: "test"))
            try await holder.query("SELECT pg_current_xact_id()", logger: Logger(label: "test"))
            try server.psql("INSERT INTO note (id, title, n) VALUES ('p1', 'from psql', 7)", as: "alice")
            // The NOTIFY wakes the bridge, whose fetch is held back.
            _ = try await deadline(30, "a sync after the NOTIFY") {
                for await event in events { if case .finished = event { return true } }
                return nil
            }
            XCTAssertEqual(try dump(b, "note"), [], "held back by the open transaction")
            try await holder.query("COMMIT", logger: Logger(label: "test"))
            let save = try await deadline(15, "p1 in group B without a NOTIFY") {
                for await save in bSaves where save.change(of: "note")?.inserted == ["p1"] { return save }
                return nil
            }
            XCTAssertEqual(save.author, "cloud")
            XCTAssertEqual(try dump(b, "note"), ["t:p1|t:from psql|i:7"])
        }

        func testRowsInsertedAndUpdatedWithPsql_reachEveryMemberOfTheUsersGroups_asCloud() async throws {
            let groups = ["b", "c"]
            var saves: [SaveStream] = []
            var stores: [GroupStore] = []
            var runs: [Task<Void, any Error>] = []
            for name in groups {
                stores.append(try open(name, schema: Self.schema))
                let watcher = try open(name, member: "watcher")
                saves.append(watcher.saves())
                try await watcher.start()
                let sync = CloudSync(try configuration(name, tables: ["note"]))
                runs.append(Task { try await sync.run() })
            }
            defer { for run in runs { run.cancel() } }
            // The first sync creates the typed table; then psql writes as alice.
            try await deadlineForTable()
            try server.psql("INSERT INTO note (id, title, n) VALUES ('p1', 'inserted with psql', 1)", as: "alice")
            try server.psql("UPDATE note SET title = 'updated with psql', n = 2 WHERE id = 'p1'", as: "alice")
            for (index, stream) in saves.enumerated() {
                let store = stores[index]
                _ = try await deadline(30, "the update in group \(groups[index])'s watcher, by cloud") {
                    for await save in stream where save.author == "cloud" {
                        guard let change = save.change(of: "note"), (change.inserted + change.updated).contains("p1") else { continue }
                        let row = try await store.pool.read {
                            try String.fetchOne($0, sql: "SELECT title || '|' || n FROM note WHERE id = 'p1'")
                        }
                        if row == "updated with psql|2" { return true }
                    }
                    return nil
                }
            }
        }

        /// A fetch keeping a mark reads the history in the page's own
        /// statement: a mark whose position the server logs with another
        /// transaction (a server restored from a dump and written to since)
        /// is not kept, and the page is dropped; the same mark with the right
        /// transaction is kept.
        func testAFetchKeepingAMark_readsWhatTheServerLogsAtItsPosition() async throws {
            let remote = try pgRemote()
            _ = try await remote.account()
            try await remote.prepare([Self.note])
            let zone = CloudZone.private("alice")
            let listing = try await remote.fetchChanges(in: zone, since: nil, limit: 100)
            try server.psql("INSERT INTO note (id, title) VALUES ('n1', 'one'), ('n2', 'two')", as: "alice")
            let head = try await remote.history(keeping: nil).head
            let kept = try await remote.fetchChanges(in: zone, since: listing.token, limit: 100, keeping: head)
            XCTAssertTrue(kept.history.keepsMark)
            XCTAssertEqual(kept.value.map(names), ["n1", "n2"])
            let other = CloudHistoryMark(epoch: head.epoch, position: head.position, entry: head.entry + "0")
            let refused = try await remote.fetchChanges(in: zone, since: listing.token, limit: 100, keeping: other)
            XCTAssertFalse(refused.history.keepsMark, "another transaction at the mark's position: not this server's history")
            XCTAssertNil(refused.value, "the page of a history that lost the mark is dropped")
        }

        /// The trigger's plans are cached for a session (format 10), but an
        /// update's join of its old and new rows is planned for its own rows:
        /// a plan cached after small updates joined 20,000 rows with a nested
        /// loop for over 20 s (measured), where this takes about a second.
        /// Every row is logged once, with what it was before.
        func testALargeUpdateAfterSmallOnesInOneSession_isPlannedForItsRows_andLoggedWhole() async throws {
            let remote = try pgRemote()
            _ = try await remote.account()
            try await remote.prepare([Self.note])
            try server.psql("INSERT INTO note (id, n) SELECT 'r' || i, i FROM generate_series(1, 20000) AS i", as: "alice")
            let small = (1...8).map { "UPDATE note SET n = n + 1 WHERE gs_zone = 'private/alice' AND gs_name = 'r\($0)';" }
            // One session: the small updates cache the trigger's plans, then the large one runs
            // (a bound, not a measurement: the nested loop took over 20 s).
            try server.psql(
                (["SET statement_timeout = '15s';"] + small + ["UPDATE note SET title = 'all';"]).joined(separator: "\n"), as: "alice")
            XCTAssertEqual(
                try server.psql(
                    "SELECT count(*), count(DISTINCT name), count(*) FILTER (WHERE previous ->> 'title' IS NULL AND previous ->> 'id' = name) FROM groupstore.change_log WHERE type = 'note' AND previous IS NOT NULL AND tx = (SELECT max(tx) FROM groupstore.change_log)"
                ), "20000|20000|20000", "the large update's log: one entry a row, each with the row before it")
        }

        /// Waits until a bridge has created the typed table.
        private func deadlineForTable() async throws {
            let server = self.server!
            _ = try await deadline(30, "the typed table note on the server") {
                while true {
                    if (try? server.psql("SELECT to_regclass('public.note') IS NOT NULL")) == "t" { return true }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        }
    }
#endif  // Postgres
