import ArgumentParser
import Foundation
import GRDB
import GroupStore
import Logging

/// A member that commits `--count` transactions of `--rows` rows each, paced
/// at `--interval-us` (0: flat out), then prints `W <count> <seconds>`.
/// With `--plain` it writes through a plain GRDB pool, as a program that does
/// not use the library would (committed_at is taken just before the commit).
struct WriterRole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "writer", shouldDisplay: false)

    @Option var group: String
    @Option var member: String = "writer"
    @Option var count: Int
    @Option var rows: Int = 1
    @Option var intervalUs: Double = 0
    @Option var jitterUs: Double = 0
    @Option var seconds: Double = 0
    @Flag var plain = false
    @Flag var waitForGo = false

    func run() async throws {
        let write: (Int) throws -> Void
        var store: GroupStore?
        if plain {
            let pool = try DatabasePool(path: group + "/store.sqlite")
            try await pool.write { try $0.execute(sql: BenchSchema.createSQL) }
            write = { n in try pool.write { db in try Self.insert(db, n: n, rows: rows, author: "plain") } }
        } else {
            var configuration = GroupConfiguration(directory: group, member: try MemberName(member), logger: Logger(label: member))
            configuration.migrator = BenchSchema.migrator
            configuration.pruneInterval = 5
            let opened = try await GroupStore.open(configuration)
            store = opened
            write = { n in try opened.write { db in try Self.insert(db, n: n, rows: rows, author: member) } }
        }
        FileHandle.standardError.write(Data("writer ready\n".utf8))
        if waitForGo { _ = readLine() }
        let (count, interval, jitter, seconds) = (count, intervalUs / 1e6, jitterUs / 1e6, seconds)
        let start = monotonicSeconds()
        var next = start
        var written = 0
        while written < count {
            if seconds > 0 && monotonicSeconds() - start >= seconds { break }
            try write(written)
            written += 1
            if interval > 0 {
                next += interval + Double.random(in: 0...Swift.max(jitter, 0))
                sleepUntil(next)
            }
        }
        let elapsed = monotonicSeconds() - start
        await store?.flushPublications()
        emit("W \(written) \(elapsed)")
        await store?.close()
    }

    static func insert(_ db: Database, n: Int, rows: Int, author: String) throws {
        let statement = try db.cachedStatement(sql: "INSERT INTO items(author, n, committed_at) VALUES (?, ?, ?)")
        let now = Date().timeIntervalSince1970
        for row in 0..<rows {
            try statement.execute(arguments: [author, n * rows + row, now])
        }
    }
}
