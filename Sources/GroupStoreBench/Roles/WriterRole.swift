import ArgumentParser
import Foundation
import GRDB
import GroupStore
import Logging

/// A member that commits `--count` transactions of `--rows` rows each, paced
/// at `--interval-us` (0: flat out), then prints `W <count> <seconds> <CPU seconds> <wall µs when the last commit returned>`.
/// With `--plain` it writes through a plain GRDB pool, as a program that does
/// not use the library would (committed_at is taken just before the commit).
/// With `--trace`, at the end, `K <first key> <µs when the write returned>`
/// per transaction.
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
    @Flag var trace = false

    func run() async throws {
        let write: (Int) throws -> Int64
        var store: GroupStore?
        if plain {
            // As an outside program would: waiting for the lock when a member
            // holds it (closing this writer's transactions), not failing.
            var settings = Configuration()
            settings.busyMode = .timeout(10)
            let pool = try DatabasePool(path: group + "/store.sqlite", configuration: settings)
            try await pool.write { try $0.execute(sql: BenchSchema.createSQL) }
            write = { n in try pool.write { db in try Self.insert(db, n: n, rows: rows, author: "plain") } }
        } else {
            var configuration = GroupConfiguration(directory: group, member: try MemberName(member), logger: Logger(label: member))
            configuration.migrator = BenchSchema.migrator
            configuration.pruneInterval = 5
            let opened = try await GroupStore.open(configuration)
            store = opened
            write = { n in try opened.writeBlocking { db in try Self.insert(db, n: n, rows: rows, author: member) } }
        }
        FileHandle.standardError.write(Data("writer ready\n".utf8))
        if waitForGo { _ = readLine() }
        let (count, interval, jitter, seconds) = (count, intervalUs / 1e6, jitterUs / 1e6, seconds)
        let start = monotonicSeconds()
        let startCPU = ProcessFacts.cpuSeconds
        var next = start
        var written = 0
        var returned: [(key: Int64, at: Double)] = []
        if trace { returned.reserveCapacity(count) }
        while written < count {
            if seconds > 0 && monotonicSeconds() - start >= seconds { break }
            let key = try write(written)
            if trace { returned.append((key, ProcessFacts.nowMicros)) }
            written += 1
            if interval > 0 {
                next += interval + Double.random(in: 0...Swift.max(jitter, 0))
                sleepUntil(next)
            }
        }
        let elapsed = monotonicSeconds() - start
        let cpu = ProcessFacts.cpuSeconds - startCPU
        let stoppedAt = ProcessFacts.nowMicros
        await store?.flushPublications()
        for (key, at) in returned { emit(String(format: "K %lld %.1f", key, at)) }
        emit(String(format: "W %d %f %f %.1f", written, elapsed, cpu, stoppedAt))
        await store?.close()
    }

    /// - Returns: the key of the first row inserted.
    @discardableResult
    static func insert(_ db: Database, n: Int, rows: Int, author: String) throws -> Int64 {
        let statement = try db.cachedStatement(sql: "INSERT INTO items(author, n, committed_at) VALUES (?, ?, ?)")
        let now = Date().timeIntervalSince1970
        var first: Int64 = 0
        for row in 0..<rows {
            try statement.execute(arguments: [author, n * rows + row, now])
            if row == 0 { first = db.lastInsertedRowID }
        }
        return first
    }
}
