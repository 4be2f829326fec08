/// Why one of a sync session's loops ended (``CloudSync``'s session runs
/// four: local saves, push hints, the fetch timer, the syncs): the first to
/// end ends the session, and says why.
enum SessionLoopEnd: Sendable, Equatable {
    /// The session was cancelled or shut down (every loop then ends so).
    case cancelled
    /// A synced table's schema changed: the tables are mapped again, in a new session.
    case tablesChanged
    /// The member's stream of saves ended: the store closed, or the group
    /// was removed or replaced under it.
    case savesEnded
    /// The bridge stopped before a delivered save was taken in (it comes again).
    case intakeStopped
    /// The remote's push hints ended.
    case pushHintsEnded

    var sentence: String {
        switch self {
        case .cancelled: return "shut down"
        case .tablesChanged: return "a synced table's schema changed"
        case .savesEnded: return "the member's saves ended (its store closed, or the group was removed or replaced)"
        case .intakeStopped: return "stopped before a save was taken in (it is delivered again at the next start)"
        case .pushHintsEnded: return "the remote's push hints ended"
        }
    }
}
