import Foundation
import GRDB

/// What a member publishes after one of its commits: the save it recorded,
/// built inside the write transaction from the change rows it just wrote (the
/// writer's own pages, no second snapshot and no read-back after the commit).
struct Payload: Sendable {
    /// Row changes listed in one payload at most. Past it the payload lists
    /// no keys and says `"truncated":true`: readers take the history.
    static let rowLimit = 10_000

    var save: Save
    /// More than ``rowLimit`` rows changed: `save.changes` is empty.
    var truncated: Bool
    /// The newest transaction before this one when it was sealed (a reader
    /// whose cursor is there can move past this one without reading it).
    var previous: Int64

    var seq: Int64 { save.seq }

    /// Whether any member will be given this transaction: it changed a row
    /// for good (not a row inserted and deleted again, nor an `INSERT … ON
    /// CONFLICT DO NOTHING` that did nothing), or listed too many to say.
    var delivers: Bool { truncated || !save.changes.isEmpty }

    /// The payload format (in the file's name and its `format` member), apart
    /// from the history's: format 3 of the history publishes the same files.
    static let formatVersion = 2

    /// Ends the changes after the newest marker as one transaction by
    /// `author` (its marker), and builds its payload. Runs inside the write
    /// transaction; `state` is the history's state read in it (its
    /// `sealedChange` and `registryVersion`: the rows after the marker are
    /// read here, so its `newestChange` is not used).
    ///
    /// - Parameter names: the registry as last read (reloaded here if it changed).
    /// - Parameter expectedRows: about how many rows the transaction
    ///   recorded (a hint for the fold's tables).
    /// - Returns: `nil` when no tracked row changed.
    static func seal(
        _ db: Database, state: HistorySchema.State, author: MemberName, names: inout TableNames, expectedRows: Int = 0,
        folded: OpenTransactionFold? = nil
    ) throws -> Payload? {
        names = try names.current(db, version: state.registryVersion)
        // One more row than a payload lists says it is truncated.
        let tail =
            try folded?.reusable(for: state, rowLimit: rowLimit)
            ?? HistoryReader.foldedTail(db, after: state.sealedChange, limit: rowLimit, names: names, expectedRows: expectedRows)
        guard tail.rows > 0 else { return nil }
        // The commit time, as late as the transaction allows: its last
        // statement (to the microsecond, as the marker keeps it).
        let committedAt = HistorySchema.date(microseconds: HistorySchema.microseconds(Date()))
        let seq = try HistorySchema.insertMarker(db, author: author, committedAt: committedAt)
        let truncated = tail.rows > rowLimit
        return Payload(
            save: Save(seq: seq, author: author.rawValue, committedAt: committedAt, changes: truncated ? [] : tail.changes),
            truncated: truncated, previous: state.sealedChange)
    }

    /// The payload file's bytes (see `docs/PAYLOAD-FORMAT.md`).
    var json: String {
        "{\"format\":\(Payload.formatVersion),\"seq\":\(save.seq),\"author\":\(JSONText.string(save.author)),"
            + "\"committedAt\":\(Save.seconds(save.committedAt)),\"truncated\":\(truncated),\"changes\":\(save.changesJSON)}\n"
    }
}
