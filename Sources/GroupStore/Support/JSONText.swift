/// Minimal JSON text helpers for the few shapes the library writes and reads
/// (payloads, keys, JSON lines). Hand-written because they sit on the hot path
/// of every delivered save.
package enum JSONText {
    /// `text` as a JSON string literal, quotes included.
    package static func string(_ text: String) -> String {
        // Most text has nothing to escape: copied whole (bytes ≥ 0x80 are
        // parts of scalars above U+007F, which JSON takes as they are).
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) { return "\"" + text + "\"" }
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

}

/// A small JSON parser for key values: scalars, arrays, and the one-member
/// objects of ``KeyValue`` (`{"blob":…}`, `{"text_hex":…}`, `{"rowid":…}`;
/// other objects are rejected). Returns `nil` on anything malformed.
struct JSONScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ text: String) { bytes = Array(text.utf8) }

    /// Parses the whole text as one key value.
    mutating func parseKey() -> KeyValue? {
        guard let value = parseValue(depth: 0) else { return nil }
        skipSpace()
        return index == bytes.count ? value : nil
    }

    private mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    private mutating func parseValue(depth: Int) -> KeyValue? {
        skipSpace()
        guard index < bytes.count, depth < 32 else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return parseString().map(KeyValue.text)
        case UInt8(ascii: "["): return parseArray(depth: depth)
        case UInt8(ascii: "{"): return parseTaggedObject()
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "t"): return literal("true", .integer(1))
        case UInt8(ascii: "f"): return literal("false", .integer(0))
        default: return parseNumber()
        }
    }

    private mutating func literal(_ word: String, _ value: KeyValue) -> KeyValue? {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else { return nil }
        index += utf8.count
        return value
    }

    /// `{"blob":"HEX"}`, `{"text_hex":"HEX"}` or `{"rowid":N}`.
    private mutating func parseTaggedObject() -> KeyValue? {
        index += 1
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let tag = parseString() else { return nil }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
        index += 1
        skipSpace()
        guard index < bytes.count else { return nil }
        let value: KeyValue
        switch tag {
        case "blob", "text_hex":
            guard bytes[index] == UInt8(ascii: "\""), let hex = parseString(), let data = KeyValue.bytes(hex: hex) else { return nil }
            value = tag == "blob" ? .blob(data) : .invalidText(data)
        case "rowid":
            guard case .integer(let rowid)? = parseNumber() else { return nil }
            value = .rowid(rowid)
        default:
            return nil
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else { return nil }
        index += 1
        return value
    }

    private mutating func parseArray(depth: Int) -> KeyValue? {
        index += 1
        var items: [KeyValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .composite(items)
        }
        while true {
            guard let item = parseValue(depth: depth + 1) else { return nil }
            items.append(item)
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .composite(items)
            }
            return nil
        }
    }

    /// A number in JSON's grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    private mutating func parseNumber() -> KeyValue? {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index - first
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return nil }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return nil }
            isInteger = false
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return nil }
            isInteger = false
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .integer(value) }
        return Double(text).flatMap { $0.isFinite ? KeyValue.real($0) : nil }
    }

    private mutating func parseString() -> String? {
        index += 1
        var scalars = String.UnicodeScalarView()
        var run = index
        func flush(_ scanner: JSONScanner, to end: Int) {
            scalars.append(contentsOf: String(decoding: scanner.bytes[run..<end], as: UTF8.self).unicodeScalars)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flush(self, to: index)
                index += 1
                return String(scalars)
            }
            if byte == UInt8(ascii: "\\") {
                flush(self, to: index)
                index += 1
                guard index < bytes.count else { return nil }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    guard let code = hex4() else { return nil }
                    if (0xD800...0xDBFF).contains(code) {
                        // A surrogate pair.
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            return nil
                        }
                        index += 2
                        guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                        guard let scalar = Unicode.Scalar(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)) else { return nil }
                        scalars.append(scalar)
                    } else {
                        guard let scalar = Unicode.Scalar(code) else { return nil }
                        scalars.append(scalar)
                    }
                default: return nil
                }
                run = index
                continue
            }
            index += 1
        }
        return nil
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            return nil
        }
        index += 4
        return code
    }
}
