import Foundation
import GroupStore

/// One field value of a cloud record, keeping the SQLite type class it had
/// (integer, real, text, blob, `NULL`), or an asset: a large blob stored
/// apart, by content.
///
/// JSON (the embedded remote's storage and the local ancestor copies): `null`,
/// or a one-member object `{"i":42}`, `{"r":1.5}`, `{"t":"text"}`,
/// `{"b":"<base64>"}`, `{"x":"<base64>"}` (text that is not valid UTF-8, as
/// its bytes), `{"a":{"h":"<sha256 hex>","n":<size>}}`.
public enum CloudValue: Hashable, Sendable, Codable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case bytes([UInt8])
    /// Text that is not valid UTF-8 (SQLite stores any bytes as text), byte for byte.
    case invalidText([UInt8])
    case asset(CloudAsset)

    private enum Tag: String, CodingKey { case i, r, t, b, x, a }

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), single.decodeNil() {
            self = .null
            return
        }
        let container = try decoder.container(keyedBy: Tag.self)
        guard let tag = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a cloud value"))
        }
        switch tag {
        case .i: self = .integer(try container.decode(Int64.self, forKey: .i))
        case .r:
            // Infinities (SQLite stores them) travel as strings: JSON has no number for them;
            // so may -0.0 ("-0"), where JSON numbers are kept as decimals (PostgreSQL's jsonb).
            if let text = try? container.decode(String.self, forKey: .r), let value = Double(text),
                value.isInfinite || (value == 0 && value.sign == .minus)
            {
                self = .real(value)
            } else {
                self = .real(try container.decode(Double.self, forKey: .r))
            }
        case .t: self = .text(try container.decode(String.self, forKey: .t))
        case .b:
            guard let data = Data(base64Encoded: try container.decode(String.self, forKey: .b)) else {
                throw DecodingError.dataCorruptedError(forKey: .b, in: container, debugDescription: "bad base64")
            }
            self = .bytes([UInt8](data))
        case .x:
            guard let data = Data(base64Encoded: try container.decode(String.self, forKey: .x)) else {
                throw DecodingError.dataCorruptedError(forKey: .x, in: container, debugDescription: "bad base64")
            }
            self = .invalidText([UInt8](data))
        case .a: self = .asset(try container.decode(CloudAsset.self, forKey: .a))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if case .null = self {
            var single = encoder.singleValueContainer()
            try single.encodeNil()
            return
        }
        var container = encoder.container(keyedBy: Tag.self)
        switch self {
        case .null: break
        case .integer(let value): try container.encode(value, forKey: .i)
        case .real(let value):
            if value.isInfinite {
                try container.encode(value > 0 ? "inf" : "-inf", forKey: .r)
            } else {
                try container.encode(value, forKey: .r)
            }
        case .text(let value): try container.encode(value, forKey: .t)
        case .bytes(let value): try container.encode(Data(value).base64EncodedString(), forKey: .b)
        case .invalidText(let value): try container.encode(Data(value).base64EncodedString(), forKey: .x)
        case .asset(let value): try container.encode(value, forKey: .a)
        }
    }

    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return "'\(value)'"
        case .bytes(let value): return "<\(value.count) bytes>"
        case .invalidText(let value): return "<text of \(value.count) bytes, not UTF-8>"
        case .asset(let value): return "<asset \(value.size) bytes \(value.hash.prefix(12))>"
        }
    }

    /// The size this value adds to an upload batch (assets travel apart).
    package var batchSize: Int {
        switch self {
        case .null: return 4
        case .integer, .real: return 12
        case .text(let value): return value.utf8.count + 4
        case .bytes(let value), .invalidText(let value): return value.count * 4 / 3 + 4
        case .asset: return 90
        }
    }
}

/// A blob stored once by its content: the SHA-256 of its bytes, and its size.
public struct CloudAsset: Hashable, Sendable, Codable {
    /// Lower-case hexadecimal SHA-256 of the bytes.
    public var hash: String
    public var size: Int

    public init(hash: String, size: Int) {
        self.hash = hash
        self.size = size
    }

    public init(bytes: [UInt8]) {
        self.init(hash: SHA256.hex(bytes), size: bytes.count)
    }

    enum CodingKeys: String, CodingKey {
        case hash = "h"
        case size = "n"
    }
}

/// A record's fields by column name.
public typealias CloudFields = [String: CloudValue]
