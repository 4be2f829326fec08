import Foundation
import GroupStore

/// The JSON of a record's fields (the embedded remote's storage and the
/// local ancestor copies), written and read by hand: Foundation's coders
/// cost tens of microseconds a record, and an initial sync handles
/// hundreds of thousands. The format is ``CloudValue``'s.
package enum CloudFieldsJSON {
    /// - Parameter negativeZeroAsText: writes -0.0 as `{"r":"-0"}` (read
    ///   back as -0.0), for stores that keep JSON numbers as decimals, which
    ///   have no negative zero (PostgreSQL's `jsonb`).
    package static func encode(_ fields: CloudFields, negativeZeroAsText: Bool = false) -> String {
        var out = "{"
        var first = true
        for key in fields.keys.sorted() {
            if !first { out += "," }
            first = false
            appendString(key, to: &out)
            out += ":"
            switch fields[key]! {
            case .null: out += "null"
            case .integer(let value): out += "{\"i\":\(value)}"
            case .real(let value):
                if value.isInfinite {
                    out += value > 0 ? "{\"r\":\"inf\"}" : "{\"r\":\"-inf\"}"
                } else if negativeZeroAsText && value == 0 && value.sign == .minus {
                    out += "{\"r\":\"-0\"}"
                } else {
                    // Swift prints the shortest text that reads back as the same double.
                    let text = "\(value)"
                    out += "{\"r\":" + (text.contains(".") || text.contains("e") ? text : text + ".0") + "}"
                }
            case .text(let value):
                out += "{\"t\":"
                appendString(value, to: &out)
                out += "}"
            case .bytes(let value): out += "{\"b\":\"" + Data(value).base64EncodedString() + "\"}"
            case .invalidText(let value): out += "{\"x\":\"" + Data(value).base64EncodedString() + "\"}"
            case .asset(let asset):
                out += "{\"a\":{\"h\":"
                appendString(asset.hash, to: &out)
                out += ",\"n\":\(asset.size)}}"
            }
        }
        return out + "}"
    }

    private static func appendString(_ value: String, to out: inout String) {
        out += JSONText.string(value)
    }

    struct Malformed: Error, CustomStringConvertible {
        var offset: Int
        var description: String { "malformed record fields at byte \(offset)" }
    }

    package static func decode(_ text: String) throws -> CloudFields {
        var parser = Parser(bytes: Array(text.utf8))
        let fields = try parser.fields()
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw Malformed(offset: parser.index) }
        return fields
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }

        mutating func expect(_ byte: UInt8) throws {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { throw Malformed(offset: index) }
            index += 1
        }

        mutating func peek() -> UInt8? {
            skipSpace()
            return index < bytes.count ? bytes[index] : nil
        }

        mutating func fields() throws -> CloudFields {
            try expect(UInt8(ascii: "{"))
            var fields: CloudFields = [:]
            if peek() == UInt8(ascii: "}") {
                index += 1
                return fields
            }
            while true {
                let key = try string()
                try expect(UInt8(ascii: ":"))
                fields[key] = try value()
                skipSpace()
                guard index < bytes.count else { throw Malformed(offset: index) }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return fields
            }
        }

        mutating func value() throws -> CloudValue {
            if peek() == UInt8(ascii: "n") {
                guard index + 4 <= bytes.count, bytes[index..<index + 4].elementsEqual("null".utf8) else { throw Malformed(offset: index) }
                index += 4
                return .null
            }
            try expect(UInt8(ascii: "{"))
            let tag = try string()
            try expect(UInt8(ascii: ":"))
            let value: CloudValue
            switch tag {
            case "i":
                guard let integer = Int64(try number()) else { throw Malformed(offset: index) }
                value = .integer(integer)
            case "r":
                if peek() == UInt8(ascii: "\"") {
                    guard let real = Double(try string()), real.isInfinite || (real == 0 && real.sign == .minus) else {
                        throw Malformed(offset: index)
                    }
                    value = .real(real)
                } else {
                    guard let real = Double(try number()) else { throw Malformed(offset: index) }
                    value = .real(real)
                }
            case "t": value = .text(try string())
            case "b":
                guard let data = Data(base64Encoded: try string()) else { throw Malformed(offset: index) }
                value = .bytes([UInt8](data))
            case "x":
                guard let data = Data(base64Encoded: try string()) else { throw Malformed(offset: index) }
                value = .invalidText([UInt8](data))
            case "a":
                try expect(UInt8(ascii: "{"))
                var hash: String?
                var size: Int?
                while true {
                    let key = try string()
                    try expect(UInt8(ascii: ":"))
                    if key == "h" {
                        hash = try string()
                    } else if key == "n" {
                        size = Int(try number())
                    } else {
                        throw Malformed(offset: index)
                    }
                    if peek() == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect(UInt8(ascii: "}"))
                    break
                }
                guard let hash, let size else { throw Malformed(offset: index) }
                value = .asset(CloudAsset(hash: hash, size: size))
            default: throw Malformed(offset: index)
            }
            try expect(UInt8(ascii: "}"))
            return value
        }

        mutating func number() throws -> String {
            skipSpace()
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) || "+-.eE".utf8.contains(bytes[index]) { index += 1 }
            guard index > start else { throw Malformed(offset: index) }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func string() throws -> String {
            try expect(UInt8(ascii: "\""))
            let start = index
            // Fast path: no escapes.
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") { index += 1 }
            guard index < bytes.count else { throw Malformed(offset: index) }
            if bytes[index] == UInt8(ascii: "\"") {
                defer { index += 1 }
                return String(decoding: bytes[start..<index], as: UTF8.self)
            }
            var out = [UInt8](bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
                guard byte == UInt8(ascii: "\\") else {
                    out.append(byte)
                    continue
                }
                guard index < bytes.count else { break }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar), index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    {
                        index += 2
                        let low = try hex4()
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw Malformed(offset: index) }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                default: out.append(escaped)
                }
            }
            throw Malformed(offset: index)
        }

        mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
            else { throw Malformed(offset: index) }
            index += 4
            return value
        }
    }
}
