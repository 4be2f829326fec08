#if Gateway
    import GroupStoreCloud

    /// Waits, 10 s at most, until `condition` holds (checked every
    /// millisecond); throws an error naming `what` when it never does.
    func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        let bound = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < bound else { throw CloudSyncError(.transient, "timed out after 10 s waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
#endif  // Gateway
