import Foundation
import GRDB

/// The SQL given to `groupstore exec`: split into statements, checked for
/// statements that would break its one-transaction promise, and the rows of
/// queries formatted for output.
enum SQLScript {
    /// One statement of the script: its 1-based number among the non-empty
    /// statements and its text (with any leading comments).
    struct Statement: Equatable {
        var number: Int
        var text: String
    }

    /// Why a statement is refused.
    enum Refusal: Equatable {
        /// BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT, RELEASE: would end or
        /// nest exec's own transaction.
        case transactionControl(keyword: String)
        /// VACUUM (SQLite refuses it inside a transaction), ATTACH and DETACH
        /// (an attachment lasts only as long as the exec process; DETACH
        /// fails inside a transaction once the database was used): for the
        /// sqlite3 shell.
        case outsideTransactionOnly(keyword: String)
    }

    static let transactionControlKeywords: Set<String> = ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"]
    static let outsideTransactionKeywords: Set<String> = ["VACUUM", "ATTACH", "DETACH"]

    // MARK: Splitting

    /// The non-empty statements of `sql`, split where SQLite itself would end
    /// them: this follows the state machine of `sqlite3_complete()` (strings,
    /// quoted identifiers, `--` and `/* */` comments, and `CREATE TRIGGER …
    /// BEGIN …; END` bodies do not end a statement). Text after the last `;`
    /// is a last statement if it holds more than comments and white space; an
    /// unterminated string or comment makes the rest one statement (SQLite
    /// reports the error when it prepares it).
    static func statements(in sql: String) -> [Statement] {
        let bytes = Array(sql.utf8)
        var chunks: [ArraySlice<UInt8>] = []
        var start = 0
        var state = 0
        var index = 0
        scanning: while index < bytes.count {
            let token: Token
            switch bytes[index] {
            case UInt8(ascii: ";"):
                token = .semicolon
            case UInt8(ascii: " "), UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: "\n"), 0x0C:
                token = .whiteSpace
            case UInt8(ascii: "/") where byte(bytes, index + 1) == UInt8(ascii: "*"):
                index += 2
                while index < bytes.count && !(bytes[index] == UInt8(ascii: "*") && byte(bytes, index + 1) == UInt8(ascii: "/")) {
                    index += 1
                }
                guard index < bytes.count else { break scanning }
                index += 1
                token = .whiteSpace
            case UInt8(ascii: "-") where byte(bytes, index + 1) == UInt8(ascii: "-"):
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
                guard index < bytes.count else { break scanning }
                token = .whiteSpace
            case UInt8(ascii: "["):
                index += 1
                while index < bytes.count && bytes[index] != UInt8(ascii: "]") { index += 1 }
                guard index < bytes.count else { break scanning }
                token = .other
            case UInt8(ascii: "`"), UInt8(ascii: "\""), UInt8(ascii: "'"):
                let quote = bytes[index]
                index += 1
                while index < bytes.count && bytes[index] != quote { index += 1 }
                guard index < bytes.count else { break scanning }
                token = .other
            case let first where isIdentifierByte(first):
                var end = index + 1
                while end < bytes.count && isIdentifierByte(bytes[end]) { end += 1 }
                token = Token(word: bytes[index..<end])
                index = end - 1
            default:
                token = .other
            }
            state = Self.transitions[state][token.rawValue]
            index += 1
            if token == .semicolon && state == 1 {
                chunks.append(bytes[start..<index])
                start = index
                state = 0
            }
        }
        if start < bytes.count { chunks.append(bytes[start...]) }
        var statements: [Statement] = []
        for chunk in chunks {
            let text = String(decoding: chunk, as: UTF8.self)
            if firstWord(of: text) != nil { statements.append(Statement(number: statements.count + 1, text: text)) }
        }
        return statements
    }

    /// Tokens of `sqlite3_complete()`.
    private enum Token: Int {
        case semicolon, whiteSpace, other, explain, create, temp, trigger, end

        init(word: ArraySlice<UInt8>) {
            switch String(decoding: word, as: UTF8.self).uppercased() {
            case "EXPLAIN": self = .explain
            case "CREATE": self = .create
            case "TEMP", "TEMPORARY": self = .temp
            case "TRIGGER": self = .trigger
            case "END": self = .end
            default: self = .other
            }
        }
    }

    /// `sqlite3_complete()`'s transitions: states 0 invalid, 1 start (a
    /// statement just ended), 2 normal, 3 explain, 4 create, 5 trigger body,
    /// 6 semicolon in a trigger body, 7 `END` in a trigger body.
    private static let transitions: [[Int]] = [
        // ;  ws other explain create temp trigger end
        [1, 0, 2, 3, 4, 2, 2, 2],  // 0 invalid
        [1, 1, 2, 3, 4, 2, 2, 2],  // 1 start
        [1, 2, 2, 2, 2, 2, 2, 2],  // 2 normal
        [1, 3, 3, 2, 4, 2, 2, 2],  // 3 explain
        [1, 4, 2, 2, 2, 4, 5, 2],  // 4 create
        [6, 5, 5, 5, 5, 5, 5, 5],  // 5 trigger
        [6, 6, 5, 5, 5, 5, 5, 7],  // 6 semicolon
        [1, 7, 5, 5, 5, 5, 5, 5],  // 7 end
    ]

    private static func byte(_ bytes: [UInt8], _ index: Int) -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    /// Letters, digits, `_`, `$` and non-ASCII bytes, as SQLite's `IdChar`.
    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "$"), 0x80...0xFF:
            return true
        default:
            return false
        }
    }

    // MARK: Checking

    /// The statement's text from its first word on: leading white space,
    /// comments and semicolons skipped. `nil` when there is nothing else.
    static func body(of statement: String) -> Substring? {
        let utf8 = statement.utf8
        var index = utf8.startIndex
        func at(_ offset: Int) -> UInt8? {
            utf8.index(index, offsetBy: offset, limitedBy: utf8.endIndex).flatMap { $0 < utf8.endIndex ? utf8[$0] : nil }
        }
        while index < utf8.endIndex {
            switch utf8[index] {
            case UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "\r"), UInt8(ascii: "\t"), UInt8(ascii: "\n"), 0x0C:
                index = utf8.index(after: index)
            case UInt8(ascii: "-") where at(1) == UInt8(ascii: "-"):
                guard let newline = utf8[index...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                index = newline
            case UInt8(ascii: "/") where at(1) == UInt8(ascii: "*"):
                index = utf8.index(index, offsetBy: 2)
                while index < utf8.endIndex && !(utf8[index] == UInt8(ascii: "*") && at(1) == UInt8(ascii: "/")) {
                    index = utf8.index(after: index)
                }
                guard index < utf8.endIndex else { return nil }
                index = utf8.index(index, offsetBy: 2)
            default:
                return statement[index...]
            }
        }
        return nil
    }

    /// The first word of the statement, upper-cased (`""` when it starts with
    /// something else), or `nil` for a blank statement.
    static func firstWord(of statement: String) -> String? {
        guard let body = body(of: statement) else { return nil }
        return String(decoding: body.utf8.prefix(while: isIdentifierByte), as: UTF8.self).uppercased()
    }

    /// Why `exec` must not run `statement`, or `nil` when it may.
    static func refusal(for statement: String) -> Refusal? {
        guard let word = firstWord(of: statement) else { return nil }
        if transactionControlKeywords.contains(word) { return .transactionControl(keyword: word) }
        if outsideTransactionKeywords.contains(word) { return .outsideTransactionOnly(keyword: word) }
        return nil
    }

    /// The one-line message for a refused statement.
    static func message(for refusal: Refusal, statement: Statement, databasePath: String) -> String {
        let named = "statement \(statement.number) (\(summary(of: statement.text)))"
        switch refusal {
        case .transactionControl:
            return "refused \(named): exec runs all of its SQL as one transaction, so it does not accept "
                + "BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT or RELEASE; nothing was committed"
        case .outsideTransactionOnly("VACUUM"):
            return "refused \(named): VACUUM cannot run inside a transaction, and exec runs all of its SQL as one; "
                + "run it with the sqlite3 shell (sqlite3 \(databasePath)); nothing was committed"
        case .outsideTransactionOnly(let keyword):
            return "refused \(named): exec does not run \(keyword) (an attachment would last only as long as this "
                + "process, and DETACH fails inside exec's transaction once the database is used); "
                + "run it with the sqlite3 shell (sqlite3 \(databasePath)); nothing was committed"
        }
    }

    /// The statement on one line, shortened: for messages.
    static func summary(of statement: String, limit: Int = 60) -> String {
        var text = String(body(of: statement) ?? "")
        while text.hasSuffix(";") || text.last?.isWhitespace == true { text.removeLast() }
        text = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return text.count > limit ? text.prefix(limit - 1) + "…" : text
    }

    // MARK: Output

    /// A row as one line: values separated by tabs, NULL as an empty field,
    /// text with `\`, tab, line feed and carriage return escaped as `\\`,
    /// `\t`, `\n`, `\r`, blobs as `X'…'` in hexadecimal.
    static func line(_ row: Row) -> String {
        row.databaseValues.map(field).joined(separator: "\t")
    }

    static func field(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null:
            return ""
        case .int64(let integer):
            return String(integer)
        case .double(let double):
            return "\(double)"
        case .string(let string):
            var escaped = ""
            escaped.reserveCapacity(string.utf8.count)
            for character in string.unicodeScalars {
                switch character {
                case "\\": escaped += "\\\\"
                case "\t": escaped += "\\t"
                case "\n": escaped += "\\n"
                case "\r": escaped += "\\r"
                default: escaped.unicodeScalars.append(character)
                }
            }
            return escaped
        case .blob(let data):
            let digits = Array("0123456789ABCDEF".utf8)
            var hex: [UInt8] = Array("X'".utf8)
            for byte in data {
                hex.append(digits[Int(byte >> 4)])
                hex.append(digits[Int(byte & 0x0F)])
            }
            hex.append(UInt8(ascii: "'"))
            return String(decoding: hex, as: UTF8.self)
        }
    }
}
