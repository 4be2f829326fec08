import Foundation

/// The JSON shapes of a ``Save``: the line printed by `groupstore watch
/// --format jsonl` and `history`, and the `changes` of a payload file (see
/// `docs/PAYLOAD-FORMAT.md`).
extension Save {
    /// One line of JSON (no newline):
    /// `{"seq":…,"author":…,"committedAt":…,["receivedAt":…,]"changes":[{"entity":…,"inserted":[…],"updated":[…],"deleted":[…],"reset":…}]}`;
    /// a resync adds `"resync":true`.
    public func jsonLine(receivedAt: Date? = nil) -> String {
        var out = "{\"seq\":\(seq),\"author\":\(JSONText.string(author)),\"committedAt\":\(Self.seconds(committedAt))"
        if let receivedAt { out += ",\"receivedAt\":\(Self.seconds(receivedAt))" }
        if kind == .resync { out += ",\"resync\":true" }
        out += ",\"changes\":" + changesJSON + "}"
        return out
    }

    /// `[{"entity":…,"inserted":[…],"updated":[…],"deleted":[…],"reset":…}, …]`
    var changesJSON: String {
        let items = changes.map { change in
            "{\"entity\":\(JSONText.string(change.entity)),\"inserted\":\(Self.keys(change.inserted)),\"updated\":\(Self.keys(change.updated)),"
                + "\"deleted\":\(Self.keys(change.deleted)),\"reset\":\(change.reset)}"
        }
        return "[" + items.joined(separator: ",") + "]"
    }

    private static func keys(_ values: [KeyValue]) -> String {
        "[" + values.map(\.json).joined(separator: ",") + "]"
    }

    /// Unix seconds with microseconds (`1764086400.000123`), as
    /// `String(format: "%.6f")` prints them, without Foundation's formatter
    /// (every payload carries one; it was most of the publisher's work).
    static func seconds(_ date: Date) -> String {
        let value = date.timeIntervalSince1970
        let scaled = (value * 1_000_000).rounded()
        guard value.isFinite, abs(scaled) < 9e18 else { return String(format: "%.6f", value) }
        let micros = Int64(scaled)
        let magnitude = micros.magnitude
        let fraction = String(magnitude % 1_000_000)
        let sign = micros < 0 ? "-" : ""
        return sign + String(magnitude / 1_000_000) + "." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }
}
