import Dispatch
import ServiceLifecycle

extension GroupStore: Service {
    /// Runs the store as a swift-service-lifecycle service: starts delivering,
    /// and on graceful shutdown (SIGTERM with a `ServiceGroup`) or cancellation
    /// persists the cursor and closes.
    ///
    /// Put it in the same `ServiceGroup` as the services that loop over
    /// ``saves()``, in any order: each loop ends when its own service is shut
    /// down (a graceful shutdown of the store alone leaves them waiting, as a
    /// `ServiceGroup` shuts services down one after the other).
    public func run() async throws {
        // Starting waits for the delivery's queue: off the concurrency pool.
        try await offThePool { try self.start() }
        // Returns on graceful shutdown; throws on cancellation. Both end the run.
        do {
            try await gracefulShutdown()
            await close(endingStreams: false)
        } catch {
            await close(endingStreams: true)
        }
    }
}
