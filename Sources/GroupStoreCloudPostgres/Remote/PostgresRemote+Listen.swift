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
        /// its notification to nobody.
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
                                hints.yield()
                                for try await notification in notifications { hints.yield(from: notification.payload, own: origin) }
                            }
                        } onCancel: {
                            let closing: EventLoopFuture<Void> = connection.close()
                            _ = closing
                        }
                    } catch {
                        failure = error
                    }
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

        /// A fetch found changes held back by the fence (an open transaction
        /// anywhere in the cluster): hint again shortly, since the commit that
        /// releases them may send no notification. The delay doubles while it
        /// stays held back, up to ``maxPollDelay``.
        func pollSoon(heldBack: Bool) {
            let delay: Double? = state.withLock { state in
                guard heldBack else {
                    state.pollDelay = Self.firstPollDelay
                    return nil
                }
                guard !state.pollScheduled else { return nil }
                state.pollScheduled = true
                let delay = state.pollDelay
                state.pollDelay = min(state.pollDelay * 2, Self.maxPollDelay)
                return delay
            }
            guard let delay else { return }
            Task { [self] in
                try? await Task.sleep(for: .seconds(delay))
                state.withLock { $0.pollScheduled = false }
                hints.yield()
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
