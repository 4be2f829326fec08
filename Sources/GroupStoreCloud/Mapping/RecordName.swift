import Foundation
import GroupStore

/// Record names from row keys and back.
package enum RecordName {
    static let blobPrefix = "hex:"

    /// The record name of a row key, or `nil` if the key cannot name a record
    /// (a NULL, integer or invalid-text key in a table whose key column does
    /// not enforce its type).
    static func name(of key: KeyValue, shape: MappedTable.KeyShape) -> String? {
        switch (shape, key) {
        case (.text, .text(let text)), (.blob, .text(let text)):
            return text.hasPrefix(blobPrefix) || text.isEmpty ? nil : text
        case (.blob, .blob(let bytes)), (.text, .blob(let bytes)):
            return bytes.isEmpty ? nil : blobPrefix + KeyValue.hex(bytes)
        case (.link(let columns), .composite(let parts)) where parts.count == columns.count:
            var names: [String] = []
            for part in parts {
                // Each end named as its parent's record is (text, or a blob as `hex:`).
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
    /// text or `hex:` bytes; more: a link's JSON array of parent names).
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
            return [.text(name)]
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
    case text(String)
    case blob([UInt8])
}
