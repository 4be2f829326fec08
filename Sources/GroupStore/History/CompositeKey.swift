/// How a composite primary key is stored in `groupstore_change.key`: one text
/// of comma-separated components, each a type tag and its value, so every
/// SQLite value survives exactly (text as the hex of its bytes, so invalid
/// UTF-8 and NUL bytes too; reals with 17 significant digits):
///
/// `i<integer>`, `r<real>`, `t<hex of text bytes>`, `b<hex of blob>`, `n` (NULL).
enum CompositeKey {
    /// The SQL expression that encodes `values` (column references).
    static func sql(_ values: [String]) -> String {
        values.map { value in
            """
            (CASE typeof(\(value)) WHEN 'integer' THEN 'i' || \(value) WHEN 'real' THEN 'r' || printf('%!.17g', \(value)) \
            WHEN 'text' THEN 't' || hex(\(value)) WHEN 'blob' THEN 'b' || hex(\(value)) ELSE 'n' END)
            """
        }.joined(separator: " || ',' || ")
    }

    /// Decodes a stored composite key; `nil` if it is not one.
    static func decode(_ bytes: [UInt8]) -> KeyValue? {
        var values: [KeyValue] = []
        for part in bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            guard let tag = part.first else { return nil }
            let body = String(decoding: part.dropFirst(), as: UTF8.self)
            switch tag {
            case UInt8(ascii: "i"):
                guard let value = Int64(body) else { return nil }
                values.append(.integer(value))
            case UInt8(ascii: "r"):
                guard let value = Double(body) else { return nil }
                values.append(.real(value))
            case UInt8(ascii: "t"):
                guard let data = KeyValue.bytes(hex: body) else { return nil }
                values.append(.text(bytes: data))
            case UInt8(ascii: "b"):
                guard let data = KeyValue.bytes(hex: body) else { return nil }
                values.append(.blob(data))
            case UInt8(ascii: "n"):
                values.append(.null)
            default:
                return nil
            }
        }
        return .composite(values)
    }
}
