import ServiceLifecycle

extension GroupStore: Service {
    /// Runs the store as a swift-service-lifecycle service: starts delivering,
    /// and on graceful shutdown (SIGTERM with a `ServiceGroup`) or cancellation
    /// persists the cursor and closes.
    public func run() async throws {
        try start()
        // Returns on graceful shutdown; throws on cancellation. Both end the run.
        try? await gracefulShutdown()
        close()
    }
}
