import Foundation

/// The JSON shapes of a ``Save``: the line printed by `groupstore watch
/// --format jsonl` and `history`, and the payload file (see `docs/PAYLOAD-FORMAT.md`).
extension Save {
    /// One line of JSON (no newline):
    /// `{"seq":…,"author":…,"committedAt":…,["receivedAt":…,]"changes":[{"entity":…,"inserted":[…],"updated":[…],"deleted":[…],"reset":…}]}`;
    /// a resync adds `"resync":true`.
    public func jsonLine(receivedAt: Date? = nil) -> String {
        var out = "{\"seq\":\(seq),\"author\":\(JSONText.string(author)),\"committedAt\":\(Self.seconds(committedAt))"
        if let receivedAt { out += ",\"receivedAt\":\(Self.seconds(receivedAt))" }
        if kind == .resync { out += ",\"resync\":true" }
        out += ",\"changes\":" + changesJSON(keyLimit: nil).text + "}"
        return out
    }

    /// The payload file body for this save, keys capped at `keyLimit` in all
    /// (past it, keys are left out and `"truncated":true` says so).
    func payloadJSON(keyLimit: Int) -> String {
        let changes = changesJSON(keyLimit: keyLimit)
        return "{\"format\":\(HistorySchema.formatVersion),\"seq\":\(seq),\"author\":\(JSONText.string(author)),"
            + "\"committedAt\":\(Self.seconds(committedAt)),\"truncated\":\(changes.truncated),\"changes\":\(changes.text)}\n"
    }

    private func changesJSON(keyLimit: Int?) -> (text: String, truncated: Bool) {
        var budget = keyLimit ?? Int.max
        var truncated = false
        func keys(_ values: [KeyValue]) -> String {
            let taken = min(values.count, max(budget, 0))
            if taken < values.count { truncated = true }
            budget -= taken
            return "[" + values.prefix(taken).map(\.json).joined(separator: ",") + "]"
        }
        let items = changes.map { change in
            "{\"entity\":\(JSONText.string(change.entity)),\"inserted\":\(keys(change.inserted)),\"updated\":\(keys(change.updated)),"
                + "\"deleted\":\(keys(change.deleted)),\"reset\":\(change.reset)}"
        }
        return ("[" + items.joined(separator: ",") + "]", truncated)
    }

    /// Unix seconds with microseconds.
    static func seconds(_ date: Date) -> String {
        String(format: "%.6f", date.timeIntervalSince1970)
    }
}
