#if Gateway
    import AsyncHTTPClient
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import Synchronization

    /// One simulated bridge of the gateway's scale parts (``GatewayFleet``,
    /// ``GatewayDevices``): a ``GatewayRemote`` with its push connection that
    /// fetches its zones on every hint, as a bridge does, noting when each
    /// record first arrived.
    final class SimulatedClient: Sendable {
        let remote: GatewayRemote
        let zones: [CloudZone]
        /// When each record (by name) first arrived.
        let arrivals = Mutex<[String: Double]>([:])
        let tokens = Mutex<[CloudZone: CloudChangeToken]>([:])
        /// Fetch cycles under way (a hint's fetch of every zone).
        let busy = Mutex(0)

        init(remote: GatewayRemote, zones: [CloudZone]) {
            self.remote = remote
            self.zones = zones
        }

        /// The HTTP client the simulated clients of one run share: 64
        /// connections a gateway, and no retries of a connection refused.
        static func httpClient() -> HTTPClient {
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
            configuration.connectionPool.retryConnectionEstablishment = false
            return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        }

        /// Starts `clients` as bridges start: each fetches its zones once
        /// (`atOnce` at a time), then runs its push connection and follows
        /// its hints; the tasks that run them (cancel them to stop).
        static func start(_ clients: [SimulatedClient], fetchingAtOnce atOnce: Int) async throws -> [Task<Void, Never>] {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in clients.enumerated() {
                    if index >= atOnce { try await group.next() }
                    group.addTask { try await client.fetch() }
                }
                try await group.waitForAll()
            }
            return clients.flatMap { client in [Task { try? await client.remote.run() }, Task { await client.follow() }] }
        }

        /// Fetches each zone to its end.
        func fetch() async throws {
            busy.withLock { $0 += 1 }
            defer { busy.withLock { $0 -= 1 } }
            for zone in zones {
                while true {
                    let batch = try await remote.fetchChanges(in: zone, since: tokens.withLock { $0[zone] }, limit: 400)
                    let now = monotonicSeconds()
                    arrivals.withLock { arrivals in
                        for record in batch.changed where arrivals[record.id.name] == nil { arrivals[record.id.name] = now }
                    }
                    tokens.withLock { $0[zone] = batch.token }
                    if !batch.moreComing { break }
                }
            }
        }

        func has(_ name: String) -> Bool { arrivals.withLock { $0[name] != nil } }

        /// Fetches that failed and were made again, and the first one's error.
        let retries = Mutex<(count: Int, first: String?)>((0, nil))

        /// Fetches on every push hint until the hints end; a fetch that fails
        /// (some do at 10,000 devices on 2 saturated cores) is made again
        /// after a pause, as a bridge's sync is: else the device would wait
        /// for a hint that may never come.
        func follow() async {
            for await _ in remote.pushHints() {
                while !Task.isCancelled {
                    do {
                        try await fetch()
                        break
                    } catch {
                        retries.withLock { retries in
                            retries.count += 1
                            retries.first = retries.first ?? String(describing: error)
                        }
                        try? await Task.sleep(for: .milliseconds(Int.random(in: 100...300)))
                    }
                }
            }
        }
    }
#endif  // Gateway
