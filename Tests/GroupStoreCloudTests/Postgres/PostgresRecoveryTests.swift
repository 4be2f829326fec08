#if Postgres
    import Foundation
    import GRDB
    import GroupStore
    import GroupStoreCloud
    import GroupStoreCloudPostgres
    import PostgresTestServer
    import Subprocesses
    import XCTest

    /// The server restarted, and the listener's backend terminated, while two
    /// groups sync: sync resumes, nothing lost or duplicated.
    final class PostgresRecoveryTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .postgres }
        static let schema = "CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER)"

        func testServerRestartedAndListenerTerminated_midSync_nothingLostOrDuplicated() async throws {
            let a = try open("a", schema: Self.schema)
            let b = try open("b", schema: Self.schema)
            let bSaves = b.saves()
            try await b.start()
            let syncs = [CloudSync(try configuration("a", tables: ["item"])), CloudSync(try configuration("b", tables: ["item"]))]
            let runs = syncs.map { sync in Task { try await sync.run() } }
            defer { for run in runs { run.cancel() } }

            let total = 120
            for index in 0..<total {
                try await a.write { db in try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: ["i\(index)", index]) }
                if index == 30 { try server.restart(mode: "fast") }
                if index == 60 { try server.terminateBackends(of: "alice") }
                if index == 90 { try server.restart(mode: "immediate") }
                try await Task.sleep(for: .milliseconds(5))
            }
            // A last write after the turbulence, then wait for every row in B.
            try await a.write { db in try db.execute(sql: "UPDATE item SET n = -1 WHERE id = 'i0'") }
            let store = b
            _ = try await deadline(60, "all \(total) rows in group B") {
                for await _ in bSaves {
                    let count = try await store.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") ?? 0 }
                    let first = try await store.pool.read { try Int.fetchOne($0, sql: "SELECT n FROM item WHERE id = 'i0'") }
                    if count == total, first == -1 { return true }
                }
                return nil
            }
            XCTAssertEqual(try dump(b, "item"), try dump(a, "item"))
            // Once on the server each: the typed table's key is the record's zone and name.
            XCTAssertEqual(try server.psql("SELECT count(*), count(DISTINCT gs_name) FROM item", as: "alice"), "\(total)|\(total)")
            XCTAssertEqual(try server.psql("SELECT n FROM item WHERE id = 'i0'", as: "alice"), "-1")
        }
    }
#endif  // Postgres
