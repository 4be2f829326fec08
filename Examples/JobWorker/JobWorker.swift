import ArgumentParser
import Foundation
import GRDB
import GroupStore
import JobQueue
import Logging
import ServiceLifecycle
import UnixSignals

/// A daemon that claims and completes jobs as the producer's saves arrive (no
/// polling). On SIGTERM it finishes the job it holds and exits: no job is left
/// half-done.
///
///     job-worker --group /tmp/demo --member worker-1
@main
struct JobWorker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "job-worker", abstract: "Claim and complete jobs as they are enqueued.")

    @Option(help: "The group directory.") var group: String
    @Option(help: "This member's name.") var member = "worker"
    @Option(help: "Simulated work per job, in milliseconds.") var workMs = 2

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: member)
        var configuration = GroupConfiguration(directory: group, member: try MemberName(member), logger: logger)
        configuration.migrator = JobQueue.migrator
        configuration.inScopeEntityNames = ["job"]
        let store = try await GroupStore.open(configuration)
        let service = WorkerService(store: store, work: .milliseconds(workMs), logger: logger)
        // The store is a service too: it delivers saves, and on SIGTERM saves
        // its cursor and closes. Any order works.
        let group = ServiceGroup(
            configuration: .init(services: [store, service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("worker stopped cleanly")
    }
}

struct WorkerService: Service {
    let store: GroupStore
    let work: Duration
    let logger: Logger

    func run() async throws {
        let me = store.member.rawValue
        // Jobs this worker held when it last stopped abruptly go back to the queue.
        let requeued = try await store.write { db -> Int in
            try db.execute(sql: "UPDATE job SET state = 'queued', worker = NULL WHERE state = 'claimed' AND worker = ?", arguments: [me])
            return db.changesCount
        }
        if requeued > 0 { logger.info("requeued jobs held before a crash", metadata: ["count": "\(requeued)"]) }
        logger.info("worker started")
        try await drain()
        // Ends on SIGTERM (graceful shutdown), whatever the order of the services.
        for await save in store.saves() where save.change(of: "job")?.inserted.isEmpty == false {
            try await drain()
        }
    }

    /// Claims and completes queued jobs until none is left or shutdown begins.
    /// A claimed job is always completed, even when shutdown begins meanwhile.
    private func drain() async throws {
        let me = store.member.rawValue
        while !Task.isShuttingDownGracefully {
            let claimed = try await store.write { db -> (Int64, String)? in
                guard
                    let row = try Row.fetchOne(
                        db,
                        sql: """
                            UPDATE job SET state = 'claimed', worker = ?
                            WHERE id = (SELECT id FROM job WHERE state = 'queued' ORDER BY id LIMIT 1)
                            RETURNING id, payload
                            """, arguments: [me])
                else { return nil }
                return (row["id"], row["payload"])
            }
            guard let (id, payload) = claimed else { return }
            // The work happens outside any transaction; shutdown waits for it.
            try? await Task.sleep(for: work)
            let result = String(payload.reversed())
            try await store.write { db in
                try db.execute(
                    sql: "UPDATE job SET state = 'done', result = ?, done_at = ? WHERE id = ?",
                    arguments: [result, Date().timeIntervalSince1970, id])
            }
            logger.info("completed job", metadata: ["job": "\(id)"])
            printLine("worker completed job \(id)")
        }
    }
}

/// Writes one line to stdout at once, so a reader on a pipe sees it now.
private func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
