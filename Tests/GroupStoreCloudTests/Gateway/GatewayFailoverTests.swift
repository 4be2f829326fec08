#if Gateway
    import Foundation
    import GRDB
    import GroupStore
    import GroupStoreCloud
    import XCTest

    /// Two gateway processes in front of one PostgreSQL server; the bridges of
    /// two groups list both (`http://gw1,gw2`) and sync continuously.
    final class GatewayFailoverTests: CloudTestCase {
        override class var remoteKind: RemoteKind { .gateway }
        static let schema = "CREATE TABLE item(id TEXT PRIMARY KEY, n INTEGER)"

        func testAGatewaySIGKILLedWhileBridgesSync_everyChangeArrivesOnce_andNoBridgeRestarts() async throws {
            gateways.append(try GatewayProcess.start(server: server, secret: gatewaySecret))
            let a = try open("a", schema: Self.schema)
            _ = try open("b", schema: Self.schema)
            let watcher = try open("b", member: "watcher")
            let saves = watcher.saves()
            let syncA = CloudSync(try configuration("a", tables: ["item"]))
            let syncB = CloudSync(try configuration("b", tables: ["item"]))
            let bridgeA = Task { try await syncA.run() }
            let bridgeB = Task { try await syncB.run() }
            defer {
                bridgeA.cancel()
                bridgeB.cancel()
            }
            let batches = 20
            let rows = 10
            for batch in 0..<batches {
                try await a.write { db in
                    for row in 0..<rows { try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: ["b\(batch)-\(row)", row]) }
                }
                // The first gateway dies in the middle of the stream, requests and push connections in flight.
                if batch == batches / 2 { gateways[0].kill() }
                // Writes spread over the kill (load shaping, not synchronisation).
                try await Task.sleep(for: .milliseconds(15))
            }
            let expected = batches * rows
            let counts = try await deadline(90, "\(expected) rows in group b") { () -> [String: Int]? in
                var counts: [String: Int] = [:]
                for await save in saves where save.author == "cloud" {
                    guard let change = save.change(of: "item") else { continue }
                    XCTAssertTrue(change.deleted.isEmpty, "no row was deleted: \(change.deleted)")
                    for key in change.inserted + change.updated { counts["\(key)", default: 0] += 1 }
                    if counts.count == expected { return counts }
                }
                return nil
            }
            XCTAssertEqual(counts.count, expected)
            XCTAssertEqual(counts.filter { $0.value != 1 }, [:], "each change arrives once")
            let b = try open("b", member: "reader")
            let stored = try await b.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") }
            XCTAssertEqual(stored, expected)
            // The same bridges, never restarted, still sync: a row written now arrives too.
            let after = watcher.saves()
            try await a.write { db in try db.execute(sql: "INSERT INTO item VALUES ('after', 0)") }
            let arrived = try await deadline(30, "the row written after the kill") { () -> Bool? in
                for await save in after where save.author == "cloud" {
                    if save.change(of: "item")?.inserted.contains(.text("after")) == true { return true }
                }
                return nil
            }
            XCTAssertTrue(arrived)
        }
    }
#endif  // Gateway
