import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A member's durable cursor, in `members/<member>/cursor`, replaced
/// atomically: one line `<seq> <epoch> <fingerprint>`.
///
/// - `seq`: the member processed every save up to here (``CursorKeeper``
///   has the rule).
/// - `epoch`: the group's identity (`groupstore_meta.epoch`): a database
///   replaced by another group's, or a history recreated, has another.
/// - `fingerprint`: the `committed_at` of transaction `seq` (`-` if unknown),
///   so a database restored from an older copy, whose numbers were reused by
///   new transactions since, is told apart.
///
/// A file with only `<seq>` (format 1) is read as having no epoch.
struct CursorFile: Equatable, Sendable {
    static let fileName = "cursor"
    /// The fingerprint is written with microseconds: closer than this is equal.
    static let fingerprintTolerance = 0.000_01
    /// A cursor file is one short line; anything longer is not one.
    static let maximumSize = 256

    var seq: Int64
    var epoch: String?
    var fingerprint: Double?

    /// The cursor in `folder`, or `nil` if there is none (or it is unreadable).
    static func read(in folder: DirectoryHandle) -> CursorFile? {
        guard let bytes = try? FileIO.read(fileName, in: folder, limit: maximumSize) else { return nil }
        let fields = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard let first = fields.first, let seq = Int64(first) else { return nil }
        let epoch = fields.count > 1 ? String(fields[1]) : nil
        let fingerprint = fields.count > 2 ? Double(fields[2]) : nil
        return CursorFile(seq: seq, epoch: epoch, fingerprint: fingerprint)
    }

    /// Replaces the cursor in `folder` (written in `staging`, renamed in).
    func write(member: MemberName, in folder: DirectoryHandle, staging: DirectoryHandle) throws(GroupStoreError) {
        let fingerprintText = fingerprint.map { String(format: "%.6f", $0) } ?? "-"
        try FileIO.publish(
            Array("\(seq) \(epoch ?? "-") \(fingerprintText)\n".utf8), as: Self.fileName, in: folder, staging: staging,
            tempName: "\(member).cursor.\(getpid()).tmp")
    }
}
