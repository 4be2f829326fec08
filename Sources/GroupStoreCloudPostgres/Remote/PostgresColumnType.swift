#if Postgres
    import Foundation
    import GroupStore
    import GroupStoreCloud

    /// The PostgreSQL type of a typed table's column, and how a field value
    /// travels in it: every value is sent and read as text (with a cast), so one
    /// decoding path serves every type. A value that does not fit its column (a
    /// text in an integer column, text holding a NUL byte, a non-canonical date,
    /// an asset) is kept exactly in the row's `gs_extra` JSON object instead, and
    /// the column holds `NULL`.
    enum PostgresColumnType: String, Sendable, CaseIterable {
        case text = "text"
        case bigint = "bigint"
        case double = "double precision"
        case boolean = "boolean"
        case timestamp = "timestamp(3) without time zone"
        case bytea = "bytea"
        case jsonb = "jsonb"

        /// The type a mapped column gets when its table is created.
        init(for column: CloudColumn) {
            if column.isKey || column.kind == .reference {
                // Keys and references hold record names' parts: text, or bytes.
                self = Self.textAffinity(column.declaredType) ? .text : .bytea
                return
            }
            switch column.kind {
            case .text: self = .text
            case .integer: self = .bigint
            case .real: self = .double
            case .boolean: self = .boolean
            case .date: self = .timestamp
            case .blob, .asset, .reference: self = .bytea
            case .any: self = .jsonb
            }
        }

        private static func textAffinity(_ declared: String) -> Bool {
            let upper = declared.uppercased()
            return !upper.contains("INT") && (upper.contains("CHAR") || upper.contains("CLOB") || upper.contains("TEXT"))
        }

        /// The SQL that turns parameter `$index` (text) into this type.
        func parameter(_ index: Int) -> String { cast("$\(index)") }

        /// The SQL that turns `text` (an SQL expression of type text) into this type.
        func cast(_ text: String) -> String {
            switch self {
            case .text: return text
            case .bigint: return "(\(text))::bigint"
            case .double: return "(\(text))::float8"
            case .boolean: return "(\(text))::boolean"
            case .timestamp: return "(\(text))::timestamp(3)"
            case .bytea: return "decode(\(text), 'hex')"
            case .jsonb: return "(\(text))::jsonb"
            }
        }

        /// The SQL that reads `column` (already quoted) as text.
        func select(_ column: String) -> String {
            switch self {
            case .text: return column
            case .bigint, .double, .jsonb: return "\(column)::text"
            case .boolean: return "\(column)::int::text"
            case .timestamp:
                // Canonical for a finite date of our era; as PostgreSQL writes it otherwise ('infinity', BC).
                return
                    "CASE WHEN isfinite(\(column)) AND \(column) >= '0001-01-01' THEN to_char(\(column), 'YYYY-MM-DD HH24:MI:SS.MS') ELSE \(column)::text END"
            case .bytea: return "encode(\(column), 'hex')"
            }
        }

        /// How `value` is stored: in the column (its text, `nil` for NULL), or
        /// kept aside in `gs_extra` (its JSON).
        enum Stored: Equatable {
            case column(String?)
            case extra(String)
        }

        func store(_ value: CloudValue) -> Stored {
            switch (self, value) {
            case (_, .null): return .column(nil)
            case (.text, .text(let text)) where !text.utf8.contains(0): return .column(text)
            case (.bigint, .integer(let integer)): return .column(String(integer))
            case (.double, .real(let real)) where !real.isNaN:
                if real.isInfinite { return .column(real > 0 ? "Infinity" : "-Infinity") }
                return .column("\(real)")
            case (.boolean, .integer(let integer)) where integer == 0 || integer == 1: return .column(integer == 1 ? "true" : "false")
            case (.timestamp, .text(let text)) where Self.isCanonicalDate(text): return .column(text)
            case (.bytea, .bytes(let bytes)): return .column(KeyValue.hex(bytes))
            case (.jsonb, _): return .column(Self.json(value))
            default: return .extra(Self.json(value))
            }
        }

        /// A column's text as the value it stores (`nil` text: NULL).
        func value(_ text: String?) -> CloudValue? {
            guard let text else { return .null }
            switch self {
            case .text: return .text(text)
            case .bigint: return Int64(text).map { .integer($0) }
            case .double: return Double(text).map { .real($0) }
            case .boolean: return .integer(text == "1" ? 1 : 0)
            case .timestamp: return .text(text)
            case .bytea: return KeyValue.bytes(hex: text.uppercased()).map { .bytes($0) }
            case .jsonb: return (try? Self.value(json: text)) ?? Self.plainJSON(text)
            }
        }

        /// One value as JSON (``CloudValue``'s format), with text holding a NUL
        /// byte given as its bytes (`{"x": …}`): PostgreSQL's `jsonb` cannot
        /// hold `\u0000`; and -0.0 as `{"r":"-0"}` (`jsonb` numbers are
        /// decimals, with no negative zero). ``fixText(_:)`` undoes the first.
        static func json(_ value: CloudValue) -> String {
            var value = value
            if case .text(let text) = value, text.utf8.contains(0) { value = .invalidText(Array(text.utf8)) }
            let object = CloudFieldsJSON.encode(["v": value], negativeZeroAsText: true)
            // `{"v":<value>}` → `<value>`
            return String(object.dropFirst(5).dropLast())
        }

        static func value(json: String) throws -> CloudValue {
            fixText(try CloudFieldsJSON.decode("{\"v\":\(json)}")["v"] ?? .null)
        }

        /// JSON that is not a ``CloudValue`` (written with plain SQL): a number
        /// as an integer or a real, a string as text, `true`/`false` as 1/0,
        /// `null` as NULL, anything else as its JSON text.
        static func plainJSON(_ text: String) -> CloudValue {
            switch text {
            case "null": return .null
            case "true": return .integer(1)
            case "false": return .integer(0)
            default: break
            }
            if let integer = Int64(text) { return .integer(integer) }
            if text.first != "\"", text.first != "[", text.first != "{", let real = Double(text) { return .real(real) }
            if text.first == "\"",
                let decoded = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? String
            {
                return .text(decoded)
            }
            return .text(text)
        }

        /// Bytes kept as "invalid text" that are valid UTF-8 were text with a NUL byte.
        static func fixText(_ value: CloudValue) -> CloudValue {
            if case .invalidText(let bytes) = value, let text = String(validating: bytes, as: UTF8.self) { return .text(text) }
            return value
        }

        /// `YYYY-MM-DD HH:MM:SS.SSS` (how GRDB stores dates) with every part in
        /// range: what a `timestamp(3)` gives back unchanged.
        static func isCanonicalDate(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            guard bytes.count == 23 else { return false }
            let shape = Array("0000-00-00 00:00:00.000".utf8)
            for (byte, expected) in zip(bytes, shape) {
                if expected == UInt8(ascii: "0") {
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
                } else if byte != expected {
                    return false
                }
            }
            func number(_ range: Range<Int>) -> Int { range.reduce(0) { $0 * 10 + Int(bytes[$1] - UInt8(ascii: "0")) } }
            let year = number(0..<4), month = number(5..<7), day = number(8..<10)
            let hour = number(11..<13), minute = number(14..<16), second = number(17..<19)
            guard year >= 1, (1...12).contains(month), hour < 24, minute < 60, second < 60 else { return false }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            return (1...days).contains(day)
        }
    }
#endif  // Postgres
