#if Postgres
    import Foundation
    import GroupStoreCloud
    import Logging
    import PostgresNIO
    import Synchronization

    extension PostgresRemote {
        /// Listens on the `groupstore` channel on one dedicated connection until
        /// cancelled, reconnecting with backoff; every notification is a hint
        /// (but this remote's own writes, to a sole listener: see ``PushHints``),
        /// and so is every (re)connection: what was committed meanwhile sent
        /// its notification to nobody. Each is also handed to ``notices()`` (a
        /// (re)connection as a notice of any zone). A connection that stops
        /// answering is closed and made again (``probe(_:logger:)``).
        func listen() async {
            var delay = 0.05
            while !Task.isCancelled {
                var failure: (any Error)?
                do {
                    let connection = try await PostgresConnection.connect(
                        on: noticeExecutor.loop, configuration: url.connectionConfiguration(), id: 0, logger: quietLogger)
                    do {
                        try await withTaskCancellationHandler {
                            try await connection.listen(on: PostgresServerSchema.channel) { notifications in
                                delay = 0.05
                                logger.debug("listening for push hints", metadata: ["remote": "\(displayName)"])
                                listening.store(true, ordering: .relaxed)
                                hints.yield()
                                noticeHub.yield(PostgresNotice(origin: "", tags: nil))
                                try await withThrowingTaskGroup(of: Void.self) { group in
                                    group.addTask {
                                        for try await notification in notifications {
                                            let notice = PostgresNotice(payload: notification.payload)
                                            self.hints.yield(from: notice.origin, own: self.origin)
                                            self.noticeHub.yield(notice, droppedSaying: PostgresNotice(origin: "", tags: nil))
                                        }
                                    }
                                    group.addTask { [quietLogger] in
                                        do {
                                            try await Self.probe(connection, logger: quietLogger)
                                        } catch let silent as CloudSyncError {
                                            // Said here: closing the connection ends the listen with an error of its own.
                                            self.logger.info(
                                                "push listener's connection went silent; closed it",
                                                metadata: ["remote": "\(self.displayName)", "error": "\(silent.message)"])
                                            throw silent
                                        }
                                    }
                                    // Either ends only with the connection (the probe closes a silent one).
                                    try await group.next()
                                    group.cancelAll()
                                }
                            }
                        } onCancel: {
                            let closing: EventLoopFuture<Void> = connection.close()
                            _ = closing
                        }
                    } catch {
                        failure = error
                    }
                    listening.store(false, ordering: .relaxed)
                    // Closed in every case (a connection must be closed before it goes).
                    try? await connection.close()
                } catch {
                    failure = error
                }
                if let failure, !Task.isCancelled {
                    logger.info(
                        "push listener lost its connection; reconnecting",
                        metadata: [
                            "remote": "\(displayName)",
                            "error": "\(PostgresFailure.cloudError(failure, doing: "listen", remote: displayName))",
                        ])
                }
                if Task.isCancelled { break }
                try? await Task.sleep(for: .seconds(delay))
                delay = min(delay * 2, 2)
            }
        }

        /// How often the listener's connection is asked a statement, and how
        /// long it may take to answer.
        package static let probeInterval: Duration = .seconds(5)
        static let probeTimeout: Duration = .seconds(10)
        /// The probe's statement (named, so that `pg_stat_activity` shows which connection listens).
        static let probeStatement: PostgresQuery = "SELECT 'groupstore listener'::text"

        /// Returns never while `connection` answers a statement every
        /// ``probeInterval`` within ``probeTimeout``; else closes it and
        /// throws. A listener's connection whose server went silent (a host
        /// gone without a reset, a network cut, a backend stopped) would
        /// otherwise wait for TCP to give up, hours later, and every notice
        /// meanwhile would be lost without anyone knowing (a gateway's memory
        /// answers from what it kept while it listens: ``isListening``).
        static func probe(_ connection: PostgresConnection, logger: Logger) async throws {
            while true {
                try await Task.sleep(for: probeInterval)
                let answer = send(probeStatement, on: connection, logger: logger)
                let answered = await withTaskGroup(of: Bool.self) { group in
                    group.addTask { (try? await answer.get()) != nil }
                    group.addTask {
                        try? await Task.sleep(for: probeTimeout)
                        return false
                    }
                    let first = await group.next() ?? false
                    // A silent connection's statement waits forever: closing it ends the wait.
                    if !first { try? await connection.close() }
                    group.cancelAll()
                    return first
                }
                guard answered else {
                    throw CloudSyncError(.transient, "the listener's connection did not answer a statement within \(probeTimeout)")
                }
            }
        }

        /// `query` sent on `connection`, its answer to come.
        private static func send(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) -> EventLoopFuture<
            PostgresQueryResult
        > {
            connection.query(query, logger: logger)
        }

        var quietLogger: Logger { Self.quiet(logger, below: .notice) }

        /// `logger`, saying nothing below `level`: for postgres-nio's own
        /// connection messages, which are not the library's to show.
        static func quiet(_ logger: Logger, below level: Logger.Level) -> Logger {
            var quiet = logger
            quiet.logLevel = max(logger.logLevel, level)
            return quiet
        }
    }
#endif  // Postgres
