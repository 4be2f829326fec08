import Foundation

/// A subscription's filter (``CloudFilter``) as SQL of one engine: the
/// expression rebuilt from its parse, each column through the remote's own
/// accessor, each literal written out (quoted and escaped here), so nothing
/// of the text a client sent reaches the engine unparsed.
///
/// `claim(…)` and `param(…)` must be bound first (``CloudFilter/binding(claims:parameters:)``);
/// one left unbound renders as `NULL`.
package struct FilterSQL: Sendable {
    package enum Dialect: Sendable {
        /// SQLite (the embedded and in-memory remotes): values keep their type class.
        case sqlite
        /// PostgreSQL (typed tables): a literal compared with a column takes
        /// that column's type (`done = 0` on a `boolean` column is `done = false`).
        case postgres
        /// The filter's own syntax (``CloudFilter/canonical``): what a
        /// client stores and sends, `claim(…)` and `param(…)` kept.
        case filter
    }

    package let dialect: Dialect
    /// The SQL that reads a column (of the row the filter is evaluated on).
    package let column: @Sendable (String) -> String
    /// A column's kind, for PostgreSQL's literals (`nil`: as written).
    package let kind: @Sendable (String) -> CloudColumn.Kind?

    package init(
        dialect: Dialect, column: @escaping @Sendable (String) -> String,
        kind: @escaping @Sendable (String) -> CloudColumn.Kind? = { _ in nil }
    ) {
        self.dialect = dialect
        self.column = column
        self.kind = kind
    }

    /// The filter as a boolean SQL expression (parenthesized).
    package func sql(_ filter: CloudFilter) -> String {
        "(" + render(filter.root, as: nil) + ")"
    }

    /// `node` as SQL; `kind`: the kind of the column it is compared with, if any.
    private func render(_ node: FilterNode, as kind: CloudColumn.Kind?) -> String {
        switch node {
        case .column(let name):
            return column(name)
        case .literal(let literal):
            return self.literal(literal, as: kind)
        case .named(let kind, let name):
            guard dialect == .filter else { return "NULL" }
            return (kind == .claim ? "claim(" : "param(") + Self.quoted(name) + ")"
        case .not(let operand):
            return "(NOT \(render(operand, as: nil)))"
        case .negate(let operand):
            return "(- \(render(operand, as: nil)))"
        case .binary(let op, let lhs, let rhs):
            if ["=", "<>", "<", "<=", ">", ">="].contains(op) {
                let (left, right) = (columnKind(of: lhs), columnKind(of: rhs))
                return "(\(render(lhs, as: right)) \(op) \(render(rhs, as: left)))"
            }
            return "(\(render(lhs, as: nil)) \(op) \(render(rhs, as: nil)))"
        case .isNull(let operand, let negated):
            return "(\(render(operand, as: nil)) IS \(negated ? "NOT " : "")NULL)"
        case .inList(let operand, let list, let negated):
            let kind = columnKind(of: operand)
            return "(\(render(operand, as: nil)) \(negated ? "NOT " : "")IN (\(list.map { render($0, as: kind) }.joined(separator: ", "))))"
        case .between(let operand, let low, let high, let negated):
            let kind = columnKind(of: operand)
            return "(\(render(operand, as: nil)) \(negated ? "NOT " : "")BETWEEN \(render(low, as: kind)) AND \(render(high, as: kind)))"
        case .like(let lhs, let rhs, let negated):
            // PostgreSQL's LIKE is on text; SQLite's is case-insensitive for ASCII, as written.
            let operand = dialect == .postgres ? "(\(render(lhs, as: nil)))::text" : render(lhs, as: nil)
            return "(\(operand) \(negated ? "NOT " : "")LIKE \(render(rhs, as: .text)))"
        case .function(let name, let arguments):
            let rendered = arguments.map { render($0, as: nil) }.joined(separator: ", ")
            if dialect == .postgres, name == "length" { return "length((\(rendered))::text)" }
            return "\(name)(\(rendered))"
        }
    }

    private func columnKind(of node: FilterNode) -> CloudColumn.Kind? {
        guard dialect == .postgres, case .column(let name) = node else { return nil }
        return kind(name)
    }

    private func literal(_ literal: FilterNode.Literal, as kind: CloudColumn.Kind?) -> String {
        switch (dialect, literal) {
        case (_, .null):
            return "NULL"
        case (.sqlite, .boolean(let value)):
            return value ? "1" : "0"
        case (.filter, .boolean(let value)):
            return value ? "TRUE" : "FALSE"
        case (.postgres, .boolean(let value)):
            return kind == .integer ? (value ? "1" : "0") : (value ? "true" : "false")
        case (.postgres, .integer(let value)) where kind == .boolean:
            return value != 0 ? "true" : "false"
        case (_, .integer(let value)):
            return String(value)
        case (_, .real(let value)):
            return Self.real(value)
        case (.postgres, .text(let value)) where kind == .date:
            return Self.quoted(value) + "::timestamp(3)"
        case (_, .text(let value)):
            return Self.quoted(value)
        }
    }

    /// A text literal: single quotes doubled; NUL, which neither engine
    /// keeps in text, refused by the caller's check (``CloudFilter``).
    package static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// A real literal both engines read back exactly.
    static func real(_ value: Double) -> String {
        var text = "\(value)"
        if !text.contains(".") && !text.contains("e") && !text.contains("E") { text += ".0" }
        return text
    }
}
