import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A member's durable cursor: the last sequence number it delivered, stored
/// as decimal text in `members/<member>/cursor` and replaced atomically.
enum CursorFile {
    static let fileName = "cursor"

    /// The cursor in `folder`, or `nil` if there is none (or it is unreadable).
    static func read(in folder: DirectoryHandle) -> Int64? {
        guard let bytes = try? FileIO.read(fileName, in: folder, limit: 64) else { return nil }
        return Int64(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Replaces the cursor in `folder` (written in `staging`, renamed in).
    static func write(_ cursor: Int64, member: MemberName, in folder: DirectoryHandle, staging: DirectoryHandle) throws(GroupStoreError) {
        try FileIO.publish(
            Array("\(cursor)\n".utf8), as: fileName, in: folder, staging: staging,
            tempName: "\(member).cursor.\(getpid()).tmp")
    }
}
