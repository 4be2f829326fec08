import Foundation

/// Parses a subscription's filter (``CloudFilter``) by recursive descent,
/// with SQL's precedence: `OR` < `AND` < `NOT` < comparisons (`=`, `IS`,
/// `IN`, `BETWEEN`, `LIKE`) < `+ - ||` < `* / %` < unary minus.
struct FilterParser {
    private enum Token: Equatable {
        case word(String)
        case quotedName(String)
        case integer(Int64)
        case real(Double)
        case text(String)
        case symbol(String)
        case end
    }

    private var tokens: [(token: Token, at: Int)] = []
    private var index = 0
    private let source: String
    private var error: CloudSyncError?

    /// Words that end an operand (a column may not be named one of them unquoted).
    private static let keywords: Set<String> = ["and", "or", "not", "is", "in", "between", "like", "null", "true", "false"]
    /// Words of statements and queries: a filter is an expression of the row, never one of them.
    private static let statements: Set<String> = [
        "select", "insert", "update", "delete", "drop", "create", "alter", "with", "exists", "from", "pragma", "attach", "values",
    ]
    /// The functions a filter may call: pure, of their arguments only.
    static let functions: Set<String> = ["lower", "upper", "length", "abs", "coalesce"]
    /// The most nodes a filter may have.
    static let maximumNodes = 512

    init(_ source: String) {
        self.source = source
        do { tokens = try Self.tokenize(source) } catch { self.error = error }
    }

    mutating func parse() throws -> FilterNode {
        if let error { throw error }
        guard tokens.count > 1 else { throw refusal("is empty") }
        let node = try or()
        guard case .end = tokens[index].token else { throw refusal("has more after a complete expression at \(position)") }
        var count = 0
        func visit(_ node: FilterNode) { count += 1; node.children.forEach(visit) }
        visit(node)
        guard count <= Self.maximumNodes else { throw refusal("has more than \(Self.maximumNodes) terms") }
        return node
    }

    // MARK: grammar

    private mutating func or() throws -> FilterNode {
        var node = try and()
        while accept(word: "or") { node = .binary("OR", node, try and()) }
        return node
    }

    private mutating func and() throws -> FilterNode {
        var node = try not()
        while accept(word: "and") { node = .binary("AND", node, try not()) }
        return node
    }

    private mutating func not() throws -> FilterNode {
        if accept(word: "not") { return .not(try not()) }
        return try predicate()
    }

    private mutating func predicate() throws -> FilterNode {
        let lhs = try additive()
        for op in ["=", "==", "<>", "!=", "<=", ">=", "<", ">"] where accept(symbol: op) {
            return .binary(op == "==" ? "=" : op == "!=" ? "<>" : op, lhs, try additive())
        }
        if accept(word: "is") {
            let negated = accept(word: "not")
            guard accept(word: "null") else { throw refusal("takes only IS NULL or IS NOT NULL at \(position)") }
            return .isNull(lhs, negated: negated)
        }
        let negated = accept(word: "not")
        if accept(word: "in") {
            try expect(symbol: "(")
            var list = [try additive()]
            while accept(symbol: ",") { list.append(try additive()) }
            try expect(symbol: ")")
            return .inList(lhs, list, negated: negated)
        }
        if accept(word: "between") {
            let low = try additive()
            guard accept(word: "and") else { throw refusal("needs AND in BETWEEN at \(position)") }
            return .between(lhs, low, try additive(), negated: negated)
        }
        if accept(word: "like") { return .like(lhs, try additive(), negated: negated) }
        if negated { throw refusal("has NOT where IN, BETWEEN or LIKE should follow, at \(position)") }
        return lhs
    }

    private mutating func additive() throws -> FilterNode {
        var node = try multiplicative()
        while true {
            if accept(symbol: "+") {
                node = .binary("+", node, try multiplicative())
            } else if accept(symbol: "-") {
                node = .binary("-", node, try multiplicative())
            } else if accept(symbol: "||") {
                node = .binary("||", node, try multiplicative())
            } else {
                return node
            }
        }
    }

    private mutating func multiplicative() throws -> FilterNode {
        var node = try unary()
        while true {
            if accept(symbol: "*") {
                node = .binary("*", node, try unary())
            } else if accept(symbol: "/") {
                node = .binary("/", node, try unary())
            } else if accept(symbol: "%") {
                node = .binary("%", node, try unary())
            } else {
                return node
            }
        }
    }

    private mutating func unary() throws -> FilterNode {
        if accept(symbol: "-") { return .negate(try unary()) }
        if accept(symbol: "+") { return try unary() }
        return try primary()
    }

    private mutating func primary() throws -> FilterNode {
        let (token, at) = tokens[index]
        switch token {
        case .integer(let value):
            index += 1
            return .literal(.integer(value))
        case .real(let value):
            index += 1
            return .literal(.real(value))
        case .text(let value):
            index += 1
            return .literal(.text(value))
        case .quotedName(let name):
            index += 1
            return .column(name)
        case .symbol("("):
            index += 1
            let node = try or()
            try expect(symbol: ")")
            return node
        case .word(let word):
            index += 1
            let lower = word.lowercased()
            if Self.statements.contains(lower) {
                throw refusal("has \(word.uppercased()): a subscription is a filter of the row's own columns, not a query or a write")
            }
            switch lower {
            case "null": return .literal(.null)
            case "true": return .literal(.boolean(true))
            case "false": return .literal(.boolean(false))
            default: break
            }
            guard accept(symbol: "(") else {
                guard !Self.keywords.contains(lower) else {
                    throw refusal("has \(word.uppercased()) where a value should be, at \(at + 1)")
                }
                return .column(word)
            }
            if lower == "claim" || lower == "param" {
                guard case .text(let name) = tokens[index].token else {
                    throw refusal("takes \(lower)('NAME') with a quoted name, at \(position)")
                }
                index += 1
                try expect(symbol: ")")
                return .named(lower == "claim" ? .claim : .parameter, name)
            }
            guard Self.functions.contains(lower) else {
                throw refusal(
                    "calls \(word)(), which a subscription may not (it takes \(Self.functions.sorted().joined(separator: ", ")), claim and param: a filter is a pure predicate of the row)"
                )
            }
            var arguments: [FilterNode] = []
            if !accept(symbol: ")") {
                arguments.append(try or())
                while accept(symbol: ",") { arguments.append(try or()) }
                try expect(symbol: ")")
            }
            return .function(lower, arguments)
        case .end:
            throw refusal("ends where a value should be")
        case .symbol(let symbol):
            throw refusal("has \(symbol) where a value should be, at \(at + 1)")
        }
    }

    // MARK: tokens

    private var position: String {
        index < tokens.count - 1 ? "character \(tokens[index].at + 1)" : "the end"
    }

    private mutating func accept(word: String) -> Bool {
        guard case .word(let found) = tokens[index].token, found.lowercased() == word else { return false }
        index += 1
        return true
    }

    private mutating func accept(symbol: String) -> Bool {
        guard case .symbol(symbol) = tokens[index].token else { return false }
        index += 1
        return true
    }

    private mutating func expect(symbol: String) throws {
        guard accept(symbol: symbol) else { throw refusal("needs \(symbol) at \(position)") }
    }

    private func refusal(_ problem: String) -> CloudSyncError {
        CloudSyncError(.invalidConfiguration, "the subscription filter \(String(reflecting: String(source.prefix(200)))) \(problem)")
    }

    private static func tokenize(_ source: String) throws(CloudSyncError) -> [(token: Token, at: Int)] {
        let scalars = Array(source.unicodeScalars)
        var tokens: [(token: Token, at: Int)] = []
        var i = 0
        func fail(_ problem: String) -> CloudSyncError {
            CloudSyncError(
                .invalidConfiguration,
                "the subscription filter \(String(reflecting: String(source.prefix(200)))) \(problem) at character \(i + 1)")
        }
        while i < scalars.count {
            let c = scalars[i]
            if CharacterSet.whitespacesAndNewlines.contains(c) {
                i += 1
            } else if c == "'" || c == "\"" {
                // A quoted string ('text') or name ("column"), the quote doubled inside.
                var value = String.UnicodeScalarView()
                var j = i + 1
                while true {
                    guard j < scalars.count else { throw fail("has an unterminated \(c == "'" ? "string" : "quoted name")") }
                    if scalars[j] == c {
                        if j + 1 < scalars.count && scalars[j + 1] == c {
                            value.append(c)
                            j += 2
                            continue
                        }
                        break
                    }
                    value.append(scalars[j])
                    j += 1
                }
                let text = String(value)
                if c == "\"" && text.isEmpty { throw fail("has an empty quoted name") }
                if text.unicodeScalars.contains("\u{0}") { throw fail("has a NUL character in a string") }
                tokens.append((c == "'" ? .text(text) : .quotedName(text), i))
                i = j + 1
            } else if c.properties.isAlphabetic || c == "_" {
                var j = i
                while j < scalars.count, scalars[j].properties.isAlphabetic || scalars[j] == "_" || ("0"..."9").contains(scalars[j]) {
                    j += 1
                }
                tokens.append((.word(String(String.UnicodeScalarView(scalars[i..<j]))), i))
                i = j
            } else if ("0"..."9").contains(c) || (c == "." && i + 1 < scalars.count && ("0"..."9").contains(scalars[i + 1])) {
                var j = i
                while j < scalars.count,
                    ("0"..."9").contains(scalars[j]) || scalars[j] == "." || scalars[j] == "e" || scalars[j] == "E"
                        || ((scalars[j] == "+" || scalars[j] == "-") && (scalars[j - 1] == "e" || scalars[j - 1] == "E"))
                {
                    j += 1
                }
                let text = String(String.UnicodeScalarView(scalars[i..<j]))
                if let integer = Int64(text) {
                    tokens.append((.integer(integer), i))
                } else if let real = Double(text), real.isFinite {
                    tokens.append((.real(real), i))
                } else {
                    throw fail("has a number it cannot read, \(text),")
                }
                i = j
            } else {
                let two = i + 1 < scalars.count ? String(String.UnicodeScalarView([c, scalars[i + 1]])) : ""
                if ["==", "<>", "!=", "<=", ">=", "||"].contains(two) {
                    tokens.append((.symbol(two), i))
                    i += 2
                } else if "=<>+-*/%(),".unicodeScalars.contains(c) {
                    tokens.append((.symbol(String(c)), i))
                    i += 1
                } else if c == ";" {
                    throw fail("has ; (one expression, not statements)")
                } else {
                    throw fail("has \(String(c)), which a filter does not take,")
                }
            }
        }
        tokens.append((.end, scalars.count))
        return tokens
    }
}
