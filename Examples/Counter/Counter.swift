import ArgumentParser
import Foundation
import GRDB
import GroupStore
import Logging

/// The CDShare example rebuilt for Linux: an "app" and its "extension" share a
/// `counter` entity. Each increments it and prints the other's increments as
/// they arrive, with the delay from commit to delivery.
///
///     counter --group /tmp/demo --member app --increments 10
///     counter --group /tmp/demo --member extension --increments 10
@main
struct Counter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Increment a shared counter and print the peer's increments as they arrive.")

    @Option(help: "The group directory.") var group: String
    @Option(help: "This process's member name (app, extension, …).") var member: String
    @Option(help: "How many times to increment.") var increments = 10
    @Option(help: "Milliseconds between increments.") var intervalMs = 150
    @Option(help: "Increments to expect from peers before exiting (default: as many as ours).") var expect: Int?
    @Flag(help: "Wait for a line on stdin before incrementing.") var waitForGo = false

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: member)
        logger.logLevel = .warning
        var configuration = GroupConfiguration(directory: group, member: try MemberName(member), logger: logger)
        configuration.inScopeEntityNames = ["counter"]
        configuration.migrator = Self.migrator
        let store = try await GroupStore.open(configuration)
        try await store.start()
        FileHandle.standardError.write(Data("\(member): ready\n".utf8))
        if waitForGo { _ = await Self.readLineOffPool() }

        let (member, increments, interval, expected) = (member, increments, intervalMs, expect ?? increments)
        async let incrementing: Void = {
            for _ in 0..<increments {
                let value = try await store.write { db -> Int in
                    try db.execute(sql: "UPDATE counter SET value = value + 1 WHERE id = 1")
                    return try Int.fetchOne(db, sql: "SELECT value FROM counter WHERE id = 1") ?? 0
                }
                printLine("\(member) incremented the counter to \(value)")
                try await Task.sleep(for: .milliseconds(interval))
            }
        }()
        var seen = 0
        for await save in store.saves() where save.change(of: "counter") != nil {
            let delay = Date().timeIntervalSince(save.committedAt) * 1000
            let value = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT value FROM counter WHERE id = 1") ?? 0 }
            seen += 1
            printLine("\(member) saw \(save.author) increment it (now \(value)) after \(String(format: "%.3f", delay)) ms")
            if seen == expected { break }
        }
        try await incrementing
        await store.close()
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("counter") { db in
            try db.execute(sql: "CREATE TABLE counter(id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO counter(id, value) VALUES (1, 0)")
        }
        return migrator
    }

    /// Reads one line of stdin on a dispatch thread (a blocking read must not
    /// hold a thread of the concurrency pool).
    static func readLineOffPool() async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: readLine()) }
        }
    }
}

/// Writes one line to stdout at once, so a reader on a pipe sees it now.
private func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
