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

    var seq: Int64 { save.seq }

    /// The payload format (in the file's name and its `format` member), apart
    /// from the history's: format 3 of the history publishes the same files.
    static let formatVersion = 2

    /// Ends the changes after the newest marker as one transaction by
    /// `author` (its marker), and builds its payload. Runs inside the write transaction;
    /// `state` is the history's state read in it.
    ///
    /// - Parameter names: the registry as last read (reloaded here if it changed).
    /// - Returns: `nil` when no tracked row changed.
    static func seal(
        _ db: Database, state: HistorySchema.State, author: MemberName, names: inout TableNames
    ) throws -> Payload? {
        guard state.unsealedChanges else { return nil }
        // Change ids of one transaction are consecutive (rows are only ever
        // appended while it runs), so their count needs no query.
        let truncated = state.newestChange - state.sealedChange > Int64(rowLimit)
        var changes: [EntityChange] = []
        if !truncated {
            names = try names.current(db, version: state.registryVersion)
            changes = try HistoryReader.folded(db, after: state.sealedChange, through: state.newestChange, names: names)
        }
        // The commit time, as late as the transaction allows: its last
        // statement (to the microsecond, as the marker keeps it).
        let committedAt = HistorySchema.date(microseconds: HistorySchema.microseconds(Date()))
        let seq = try HistorySchema.insertMarker(db, author: author, committedAt: committedAt)
        return Payload(
            save: Save(seq: seq, author: author.rawValue, committedAt: committedAt, changes: changes), truncated: truncated)
    }

    /// The payload file's bytes (see `docs/PAYLOAD-FORMAT.md`).
    var json: String {
        "{\"format\":\(Payload.formatVersion),\"seq\":\(save.seq),\"author\":\(JSONText.string(save.author)),"
            + "\"committedAt\":\(Save.seconds(save.committedAt)),\"truncated\":\(truncated),\"changes\":\(save.changesJSON)}\n"
    }
}
