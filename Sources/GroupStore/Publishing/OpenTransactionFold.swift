/// The changes of a write transaction still open, as the cloud bridge
/// folded them in it (``GroupStore/openTransactionChanges(_:)``): the seal of
/// that transaction uses them when nothing was recorded after, so an apply
/// folds its rows once, not once for the bridge and once for the payload.
///
/// Kept by the store for one transaction only: every library write forgets
/// it when it begins (an id range of a rolled-back transaction is used again).
struct OpenTransactionFold: Sendable {
    /// The rows folded are those with ids in `(after, through]`.
    var after: Int64
    var through: Int64
    /// The table registry they were named with.
    var registryVersion: Int64
    var changes: [EntityChange]
    var rows: Int

    /// The fold, if it is what the seal would fold now: the same rows (none
    /// recorded since), named by the same registry, and few enough for a
    /// payload to list.
    func reusable(for state: HistorySchema.State, rowLimit: Int) -> (changes: [EntityChange], rows: Int)? {
        guard after == state.sealedChange, through == state.newestChange, registryVersion == state.registryVersion, rows <= rowLimit
        else { return nil }
        return (changes, rows)
    }
}
