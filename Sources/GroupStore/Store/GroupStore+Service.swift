import Dispatch
import ServiceLifecycle

extension GroupStore: Service {
    /// Runs the store as a swift-service-lifecycle service: starts delivering,
    /// and on graceful shutdown (SIGTERM with a `ServiceGroup`) stops
    /// delivering and persists the cursor; on cancellation it closes.
    ///
    /// Put it in the same `ServiceGroup` as your services, in any order. A
    /// `ServiceGroup` shuts its services down last first, so with the store
    /// last your services are still running when it stops: their writes go on
    /// committing and reach the other members (the store closes when it is
    /// released, or with ``close()``), each `for await save in saves()`
    /// loop ends when its own service is shut down, and a save such a loop
    /// finishes after the store stopped is still recorded in the cursor.
    public func run() async throws {
        // Starting waits for the delivery's queue: off the concurrency pool.
        try await start()
        // Returns on graceful shutdown; throws on cancellation.
        do {
            try await gracefulShutdown()
            await stopDelivering()
        } catch {
            await close()
        }
    }
}
