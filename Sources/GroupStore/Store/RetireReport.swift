/// What ``GroupInspector/retire(_:)`` removed.
public struct RetireReport: Hashable, Sendable {
    /// The member retired.
    public var member: String
    /// Its cursor when retired (`nil`: it only wrote, and pinned nothing).
    public var cursor: Int64?
    /// Files removed from its folder (cursor and payloads), besides its lock.
    public var filesRemoved: Int
}
