import Dispatch
import ServiceLifecycle

extension GroupStore: Service {
    /// Runs the store as a swift-service-lifecycle service: starts delivering,
    /// and on graceful shutdown (SIGTERM with a `ServiceGroup`) or cancellation
    /// persists the cursor and closes.
    public func run() async throws {
        try start()
        // Returns on graceful shutdown; throws on cancellation. Both end the run.
        try? await gracefulShutdown()
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                self.close()
                continuation.resume()
            }
        }
    }

    /// Closes the store on a background queue (``close()`` waits for the
    /// merger and the publisher, which must not block the concurrency pool).
    public func closeInBackground() {
        DispatchQueue.global().async { self.close() }
    }
}
