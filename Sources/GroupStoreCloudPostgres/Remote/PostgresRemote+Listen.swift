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
        /// (re)connection as a notice of any zone).
        func listen() async {
            var delay = 0.05
            while !Task.isCancelled {
                var failure: (any Error)?
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: url.connectionConfiguration(), id: 0, logger: quietLogger)
                    do {
                        try await withTaskCancellationHandler {
                            try await connection.listen(on: PostgresServerSchema.channel) { notifications in
                                delay = 0.05
                                logger.debug("listening for push hints", metadata: ["remote": "\(displayName)"])
                                listening.store(true, ordering: .relaxed)
                                hints.yield()
                                noticeHub.yield(PostgresNotice(origin: "", tags: nil))
                                for try await notification in notifications {
                                    let notice = PostgresNotice(payload: notification.payload)
                                    hints.yield(from: notice.origin, own: origin)
                                    noticeHub.yield(notice, droppedSaying: PostgresNotice(origin: "", tags: nil))
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
