#if Gateway
    import GroupStoreCloud
    import Logging
    import ServiceLifecycle
    import Synchronization

    /// The host reports of a gateway's clients (`POST /v1/report`),
    /// collected and kept together every ``interval`` (``GatewayBackend/report(_:)``:
    /// one transaction for up to ``batch`` reports on PostgreSQL). A fleet's
    /// devices report every few seconds while they sync
    /// (``GroupStoreCloud/CloudSyncConfiguration/progressInterval``): one
    /// transaction each made the database's work grow with the fleet.
    ///
    /// The last report of an identity's host wins. Reports the backend could
    /// not keep are tried again with the next ones (unless a newer one of the
    /// same host came). A report is answered once collected, so the fleet view
    /// shows it up to ``interval`` later, and a gateway killed meanwhile loses
    /// it (the host reports again within ``GroupStoreCloud/CloudSyncConfiguration/reportInterval``);
    /// at graceful shutdown what is held is kept first.
    final class HostReports: Service {
        /// One host of one identity (``GatewayIdentity/key``).
        struct Key: Hashable {
            var identity: String
            var host: String
        }

        /// How often what was collected is kept (zero: each report at once, in its request).
        let interval: Duration
        /// The most reports one transaction keeps.
        static let batch = 1_000
        /// The most reports held (a report beyond it is answered "try again").
        static let capacity = 200_000

        private let backend: any GatewayBackend
        private let logger: Logger
        private let held = Mutex<[Key: (identity: GatewayIdentity, report: CloudHostReport)]>([:])

        init(backend: any GatewayBackend, logger: Logger, interval: Duration = .seconds(1)) {
            self.backend = backend
            self.logger = logger
            self.interval = interval
        }

        /// Holds `report` of `identity` until the next keeping (with an
        /// ``interval`` of zero, keeps it now).
        /// - Throws: `CloudSyncError` (``GroupStoreCloud/CloudSyncError/Code/transient``)
        ///   when ``capacity`` reports are held already; what the backend threw.
        func take(_ report: CloudHostReport, from identity: GatewayIdentity) async throws {
            guard interval > .zero else { return try await backend.report([(identity, report)]) }
            let key = Key(identity: identity.key, host: report.host)
            let held = held.withLock { held in
                guard held.count < Self.capacity || held[key] != nil else { return false }
                held[key] = (identity, report)
                return true
            }
            guard held else { throw CloudSyncError(.transient, "the gateway holds as many host reports as it keeps at once: try again") }
        }

        /// Keeps what was collected every ``interval`` until graceful
        /// shutdown, then once more.
        func run() async throws {
            guard interval > .zero else {
                try? await gracefulShutdown()
                return
            }
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.interval)
                    await self.keep()
                }
            }
            await keep()
        }

        /// Keeps what is held now, ``batch`` reports a transaction.
        func keep() async {
            let taken = held.withLock { held in
                defer { held = [:] }
                return held
            }
            let reports = Array(taken)
            for start in stride(from: 0, to: reports.count, by: Self.batch) {
                do {
                    try await backend.report(reports[start..<min(start + Self.batch, reports.count)].map(\.value))
                } catch {
                    let left = reports[start...]
                    logger.info(
                        "cannot keep the clients' host reports; they are tried again",
                        metadata: ["reports": "\(left.count)", "remote": "\(backend.displayName)", "error": "\(error)"])
                    // Newer reports of the same hosts, collected meanwhile, win.
                    held.withLock { held in
                        for (key, value) in left where held[key] == nil { held[key] = value }
                    }
                    return
                }
            }
        }
    }
#endif  // Gateway
