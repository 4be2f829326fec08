/// A primary-key value of a changed row, as JSON can carry it.
///
/// Tables keyed by rowid or an `INTEGER PRIMARY KEY` alias give ``integer(_:)``;
/// other single-column keys give the column's value with its SQLite type kept
/// (``text(_:)``, ``integer(_:)``, ``real(_:)``, ``blob(_:)``); composite keys
/// give ``composite(_:)`` in key-column order. Two shapes exist because SQLite
/// allows them and a key must name one row exactly:
/// - ``rowid(_:)``: a row of a rowid table whose declared key is `NULL` (SQLite
///   lets several rows have a `NULL` primary key); read it by `rowid`.
/// - ``invalidText(_:)``: text that is not valid UTF-8, byte for byte.
///
/// JSON: integers and reals as numbers, text as a string, `NULL` as `null`,
/// composites as arrays; the others as one-member objects:
/// `{"blob":"<HEX>"}`, `{"rowid":N}`, `{"text_hex":"<HEX>"}`.
public enum KeyValue: Hashable, Sendable, CustomStringConvertible {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    /// Text that is not valid UTF-8, as its bytes.
    case invalidText([UInt8])
    /// A row of a rowid table whose declared primary key is `NULL`, by rowid.
    case rowid(Int64)
    case null
    case composite([KeyValue])

    /// Decodes the JSON text of a key (as written in payloads and JSON lines).
    public init?(json: String) {
        var scanner = JSONScanner(json)
        guard let value = scanner.parseKey() else { return nil }
        self = value
    }

    /// The key as JSON: a scalar, an array for a composite key, or a
    /// one-member object for the shapes JSON has no scalar for.
    public var json: String {
        switch self {
        case .integer(let value): return String(value)
        case .real(let value):
            // Always with a fraction or an exponent, so it reads back as a real.
            guard value.isFinite else { return "null" }
            let text = "\(value)"
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .text(let value): return JSONText.string(value)
        case .blob(let bytes): return "{\"blob\":\"\(Self.hex(bytes))\"}"
        case .invalidText(let bytes): return "{\"text_hex\":\"\(Self.hex(bytes))\"}"
        case .rowid(let value): return "{\"rowid\":\(value)}"
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

    /// A text key from bytes read from SQLite: ``text(_:)`` when they are
    /// valid UTF-8, ``invalidText(_:)`` otherwise.
    static func text(bytes: [UInt8]) -> KeyValue {
        if let text = String(validating: bytes, as: UTF8.self) { return .text(text) }
        return .invalidText(bytes)
    }

    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    package static func bytes(hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}

extension KeyValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
}
