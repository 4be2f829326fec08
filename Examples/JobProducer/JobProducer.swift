import ArgumentParser
import Foundation
import GRDB
import GroupStore
import JobQueue
import Logging
import ServiceLifecycle
import UnixSignals

/// A daemon that enqueues jobs and reports each completion as the worker's
/// save arrives (no polling). Exits by itself once its jobs are done, or
/// cleanly on SIGTERM.
///
///     job-producer --group /tmp/demo --jobs 20
@main
struct JobProducer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "job-producer", abstract: "Enqueue jobs and report their completion by a worker.")

    @Option(help: "The group directory.") var group: String
    @Option(help: "This member's name.") var member = "producer"
    @Option(help: "Jobs to enqueue (0: keep going until SIGTERM).") var jobs = 20
    @Option(help: "Milliseconds between jobs.") var intervalMs = 50

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: member)
        var configuration = GroupConfiguration(directory: group, member: try MemberName(member), logger: logger)
        configuration.migrator = JobQueue.migrator
        configuration.inScopeEntityNames = ["job"]
        let store = try await GroupStore.open(configuration)
        let service = ProducerService(store: store, jobs: jobs, interval: .milliseconds(intervalMs), logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                // Finishing its jobs is a normal end: shut down gracefully.
                services: [.init(service: store), .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

struct ProducerService: Service {
    let store: GroupStore
    let jobs: Int
    let interval: Duration
    let logger: Logger

    func run() async throws {
        logger.info("producer started")
        let (store, jobs, interval, logger) = (self.store, self.jobs, self.interval, self.logger)
        let enqueuing = Task {
            var n = 0
            while jobs == 0 || n < jobs {
                n += 1
                let payload = "job-\(n)"
                let id = try await store.write { db -> Int64 in
                    try db.execute(
                        sql: "INSERT INTO job(payload, enqueued_at) VALUES (?, ?)", arguments: [payload, Date().timeIntervalSince1970])
                    return db.lastInsertedRowID
                }
                printLine("producer enqueued job \(id)")
                try await Task.sleep(for: interval)
            }
        }
        var done = Set<Int64>()
        // Ends on SIGTERM (graceful shutdown), whatever the order of the services.
        for await save in store.saves() {
            guard let updated = save.change(of: "job")?.updated, !updated.isEmpty else { continue }
            let ids = updated.compactMap(\.integerValue)
            // Rows are read into Sendable values, so GRDB runs the read off the concurrency pool.
            let finished =
                (try? await store.pool.read { db in
                    try Row.fetchAll(
                        db,
                        sql:
                            "SELECT id, worker, result, done_at FROM job WHERE state = 'done' AND id IN (\(ids.map(String.init).joined(separator: ",")))"
                    ).map {
                        (
                            id: $0["id"] as Int64, worker: $0["worker"] as String, result: $0["result"] as String,
                            doneAt: $0["done_at"] as Double
                        )
                    }
                }) ?? []
            for job in finished where done.insert(job.id).inserted {
                let delay = (Date().timeIntervalSince1970 - job.doneAt) * 1000
                printLine(
                    "producer saw job \(job.id) done by \(job.worker) (result \(job.result)) after \(String(format: "%.3f", delay)) ms"
                )
            }
            if jobs > 0 && done.count >= jobs { break }
        }
        enqueuing.cancel()
        logger.info("producer stopping", metadata: ["jobsDone": "\(done.count)"])
        printLine("producer: \(done.count) jobs done")
    }
}

/// Writes one line to stdout at once, so a reader on a pipe sees it now.
private func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
