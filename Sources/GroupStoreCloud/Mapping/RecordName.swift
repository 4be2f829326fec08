import Foundation
import GroupStore

/// Record names from row keys and back: one name for each key SQLite can
/// hold, and back to that key byte for byte.
///
/// - text that is valid UTF-8, not empty, holds no NUL byte and starts with
///   neither prefix below: the text itself;
/// - a blob: `hex:` and its bytes in upper-case hex;
/// - any other text (empty, with a NUL byte, not UTF-8, or starting with
///   `hex:` or `txt:`): `txt:` and its bytes in upper-case hex;
/// - a link table's composite key: the JSON array of its parts' names.
///
/// A key that is NULL, an integer or a real (a key column that does not
/// enforce its type) names no record: such a row is not synced, and said so.
package enum RecordName {
    static let blobPrefix = "hex:"
    static let textPrefix = "txt:"

    /// The record name of a row key, or `nil` if the key cannot name a record
    /// (a NULL, integer or real key in a table whose key column does not
    /// enforce its type).
    static func name(of key: KeyValue, shape: MappedTable.KeyShape) -> String? {
        switch (shape, key) {
        case (.text, .text(let text)), (.blob, .text(let text)):
            let plain = !text.isEmpty && !text.utf8.contains(0) && !text.hasPrefix(blobPrefix) && !text.hasPrefix(textPrefix)
            return plain ? text : textPrefix + KeyValue.hex(Array(text.utf8))
        case (.text, .invalidText(let bytes)), (.blob, .invalidText(let bytes)):
            return textPrefix + KeyValue.hex(bytes)
        case (.blob, .blob(let bytes)), (.text, .blob(let bytes)):
            return blobPrefix + KeyValue.hex(bytes)
        case (.link(let columns), .composite(let parts)) where parts.count == columns.count:
            var names: [String] = []
            for part in parts {
                // Each end named as its parent's record is.
                guard let name = name(of: part, shape: .blob("")) else { return nil }
                names.append(name)
            }
            return linkName(names)
        default:
            return nil
        }
    }

    /// The JSON array of a link record's parent names.
    static func linkName(_ parents: [String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: parents, options: [.withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The key column values of a record name with `count` key columns (one:
    /// text, `hex:` bytes or `txt:` text bytes; more: a link's JSON array of
    /// parent names).
    package static func keyParts(of name: String, count: Int) -> [DatabaseValueConvertibleBox]? {
        keyValues(of: name, shape: count == 1 ? .text("") : .link(Array(repeating: "", count: count)))
    }

    /// The key column values of a record name, for SQL arguments.
    static func keyValues(of name: String, shape: MappedTable.KeyShape) -> [DatabaseValueConvertibleBox]? {
        switch shape {
        case .text, .blob:
            if name.hasPrefix(blobPrefix) {
                guard let bytes = KeyValue.bytes(hex: String(name.dropFirst(blobPrefix.count))) else { return nil }
                return [.blob(bytes)]
            }
            if name.hasPrefix(textPrefix) {
                guard let bytes = KeyValue.bytes(hex: String(name.dropFirst(textPrefix.count))) else { return nil }
                return [String(validating: bytes, as: UTF8.self).map { .text($0) } ?? .invalidText(bytes)]
            }
            return name.isEmpty ? nil : [.text(name)]
        case .link(let columns):
            guard let array = try? JSONSerialization.jsonObject(with: Data(name.utf8)) as? [String], array.count == columns.count
            else { return nil }
            var values: [DatabaseValueConvertibleBox] = []
            for part in array {
                guard let value = keyValues(of: part, shape: .blob(""))?.first else { return nil }
                values.append(value)
            }
            return values
        }
    }
}

/// A key column value for SQL arguments.
package enum DatabaseValueConvertibleBox: Hashable, Sendable {
    /// Text (which may hold NUL bytes).
    case text(String)
    case blob([UInt8])
    /// Text that is not valid UTF-8, as its bytes.
    case invalidText([UInt8])
}
