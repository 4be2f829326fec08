/// A primary-key value of a changed row, as JSON can carry it.
///
/// Tables keyed by rowid or `INTEGER PRIMARY KEY` give ``integer(_:)``; other
/// single-column keys give the column's value (blobs as hex ``text(_:)``);
/// composite keys give ``composite(_:)`` in key-column order.
public enum KeyValue: Hashable, Sendable, CustomStringConvertible {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null
    case composite([KeyValue])

    /// Decodes the JSON text of a key (as stored in the history and payloads).
    public init?(json: String) {
        var scanner = JSONScanner(json)
        guard let value = scanner.parseKey() else { return nil }
        self = value
    }

    /// The key as JSON: a scalar, or an array for a composite key.
    public var json: String {
        switch self {
        case .integer(let value): return String(value)
        case .real(let value):
            // Always with a fraction or an exponent, so it reads back as a real.
            guard value.isFinite else { return "null" }
            let text = "\(value)"
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .text(let value): return JSONText.string(value)
        case .null: return "null"
        case .composite(let values): return "[" + values.map(\.json).joined(separator: ",") + "]"
        }
    }

    public var description: String { json }

    /// The integer, if this is an integer key.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}

extension KeyValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
}
