import Foundation

extension CloudDatabase {
    /// A remote that does not evaluate subscriptions answers an empty one
    /// as a plain fetch, and refuses any other.
    public func fetchChanges(
        in zone: CloudZone, since token: CloudChangeToken?, limit: Int, keeping mark: CloudHistoryMark?, subscription: CloudSubscription
    ) async throws -> CloudHistoryChecked<CloudChangeBatch> {
        guard subscription.isEmpty else { throw unsupportedSubscriptions() }
        return try await fetchChanges(in: zone, since: token, limit: limit, keeping: mark)
    }

    /// A remote that does not evaluate subscriptions refuses to say which
    /// records one holds.
    public func selected(_ ids: [CloudRecordID], subscription: CloudSubscription) async throws -> Set<CloudRecordID> {
        guard subscription.isEmpty else { throw unsupportedSubscriptions() }
        return Set(ids)
    }

    private func unsupportedSubscriptions() -> CloudSyncError {
        CloudSyncError(
            .invalidConfiguration, "\(displayName) does not evaluate subscriptions: sync the tables whole, or use another remote")
    }
}
