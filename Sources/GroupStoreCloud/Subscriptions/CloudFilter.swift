import Foundation

/// A subscription's filter: a boolean expression over one synced table's own
/// columns, in the subset of SQL every remote evaluates the same way.
///
/// ```
/// site = 7 AND done = 0
/// status IN ('open', 'late') OR priority >= 3
/// owner_site = claim('site')          -- the verified token's claim (through a gateway)
/// region = param('region')            -- a value of the host's configuration
/// ```
///
/// What it may hold, and nothing else, so a filter is a pure predicate of the
/// row (no subquery, no write, no function that reads the clock or other
/// rows): column names (bare or `"quoted"`), literals (integers, reals,
/// `'text'`, `NULL`, `TRUE`, `FALSE`), `claim('NAME')` and `param('NAME')`,
/// the operators `= == <> != < <= > >=`, `AND OR NOT`, `IS [NOT] NULL`,
/// `[NOT] IN (…)`, `[NOT] BETWEEN … AND …`, `[NOT] LIKE`, `+ - * / % ||`,
/// parentheses, and the functions `lower upper length abs coalesce`.
///
/// It is parsed here, checked against the table's columns
/// (``check(columns:table:)``), and each remote renders it for its engine
/// (``FilterSQL``), binding what the expression names as literals: nothing
/// of the text reaches a remote unparsed.
public struct CloudFilter: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The expression as written.
    public let text: String
    let root: FilterNode

    /// Parses `text`.
    /// - Throws: ``CloudSyncError/Code/invalidConfiguration`` saying what is
    ///   wrong and where (the table is named by the caller's message).
    public init(_ text: String) throws {
        var parser = FilterParser(text)
        root = try parser.parse()
        self.text = text
    }

    public var description: String { text }

    /// The columns it reads.
    public var columns: Set<String> { root.columns }
    /// The claims it reads (`claim('NAME')`).
    public var claims: Set<String> { root.names(of: .claim) }
    /// The configuration parameters it reads (`param('NAME')`).
    public var parameters: Set<String> { root.names(of: .parameter) }

    /// Refuses a filter that names a column `table` lacks (case as SQLite
    /// matches names: ignoring ASCII case).
    package func check(columns: [String], table: String) throws {
        let known = Set(columns.map { $0.lowercased() })
        for column in self.columns.sorted() where !known.contains(column.lowercased()) {
            throw CloudSyncError(
                .invalidConfiguration, "the subscription of table \(table) names column \(column), which \(table) does not have")
        }
    }

    /// This filter with its `claim(…)` and `param(…)` replaced by their
    /// values (a missing one is `NULL`, so the filter matches nothing it
    /// compares it with).
    func binding(claims: [String: CloudValue], parameters: [String: CloudValue]) -> CloudFilter {
        CloudFilter(text: text, root: root.binding(claims: claims, parameters: parameters))
    }

    /// This filter with its `param(…)` replaced by their values (a missing
    /// one is `NULL`); its `claim(…)` kept, for the remote to bind.
    public func binding(parameters: [String: CloudValue]) -> CloudFilter {
        CloudFilter(text: text, root: root.binding(claims: nil, parameters: parameters))
    }

    /// The filter written out again from its parse, in its own syntax
    /// (columns quoted, literals as written by ``FilterSQL``): what a client
    /// keeps to tell whether its subscription changed.
    public var canonical: String {
        // ``FilterSQL/sql(_:)`` parenthesizes the whole: one pair less.
        String(
            FilterSQL(dialect: .filter, column: { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }).sql(self)
                .dropFirst().dropLast())
    }

    /// The rows `new` holds and `old` did not: `new AND NOT coalesce(old, FALSE)`
    /// (`old` `nil`: every row was held, so none is new: `nil`; `new` `nil`: every row).
    static func newlyIn(_ new: CloudFilter?, leaving old: CloudFilter?) -> CloudFilter? {
        let none = FilterNode.literal(.boolean(false))
        guard let old else { return nil }
        let notBefore = FilterNode.not(.function("coalesce", [old.root, none]))
        guard let new else { return CloudFilter(text: "NOT coalesce(\(old.canonical), FALSE)", root: notBefore) }
        return CloudFilter(text: "\(new.canonical) AND NOT coalesce(\(old.canonical), FALSE)", root: .binary("AND", new.root, notBefore))
    }

    /// The rows both filters hold: `(lhs) AND (rhs)`.
    package static func both(_ lhs: CloudFilter, _ rhs: CloudFilter) -> CloudFilter {
        CloudFilter(text: "(\(lhs.text)) AND (\(rhs.text))", root: .binary("AND", lhs.root, rhs.root))
    }

    private init(text: String, root: FilterNode) {
        self.text = text
        self.root = root
    }

    // The expression travels as its text (a remote parses it again).
    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    public static func == (lhs: CloudFilter, rhs: CloudFilter) -> Bool { lhs.root == rhs.root }
    public func hash(into hasher: inout Hasher) { hasher.combine(root) }
}

/// A parsed filter (see ``CloudFilter``).
indirect enum FilterNode: Hashable, Sendable {
    enum Literal: Hashable, Sendable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case boolean(Bool)
    }

    enum Name: Hashable, Sendable {
        case claim, parameter
    }

    case column(String)
    case literal(Literal)
    /// `claim('NAME')` or `param('NAME')`, until bound.
    case named(Name, String)
    case not(FilterNode)
    case negate(FilterNode)
    /// `AND`, `OR`, comparisons, arithmetic, `||` (the operator as SQL writes it).
    case binary(String, FilterNode, FilterNode)
    case isNull(FilterNode, negated: Bool)
    case inList(FilterNode, [FilterNode], negated: Bool)
    case between(FilterNode, FilterNode, FilterNode, negated: Bool)
    case like(FilterNode, FilterNode, negated: Bool)
    case function(String, [FilterNode])

    var children: [FilterNode] {
        switch self {
        case .column, .literal, .named: return []
        case .not(let node), .negate(let node), .isNull(let node, _): return [node]
        case .binary(_, let lhs, let rhs), .like(let lhs, let rhs, _): return [lhs, rhs]
        case .inList(let node, let list, _): return [node] + list
        case .between(let node, let low, let high, _): return [node, low, high]
        case .function(_, let arguments): return arguments
        }
    }

    var columns: Set<String> {
        if case .column(let name) = self { return [name] }
        return children.reduce(into: []) { $0.formUnion($1.columns) }
    }

    func names(of kind: Name) -> Set<String> {
        if case .named(kind, let name) = self { return [name] }
        return children.reduce(into: []) { $0.formUnion($1.names(of: kind)) }
    }

    /// `claims` or `parameters` `nil`: those names are kept unbound.
    func binding(claims: [String: CloudValue]?, parameters: [String: CloudValue]?) -> FilterNode {
        func bind(_ node: FilterNode) -> FilterNode { node.binding(claims: claims, parameters: parameters) }
        switch self {
        case .column, .literal: return self
        case .named(let kind, let name):
            guard let values = kind == .claim ? claims : parameters else { return self }
            return .literal(Literal(values[name] ?? .null))
        case .not(let node): return .not(bind(node))
        case .negate(let node): return .negate(bind(node))
        case .binary(let op, let lhs, let rhs): return .binary(op, bind(lhs), bind(rhs))
        case .isNull(let node, let negated): return .isNull(bind(node), negated: negated)
        case .inList(let node, let list, let negated): return .inList(bind(node), list.map(bind), negated: negated)
        case .between(let node, let low, let high, let negated): return .between(bind(node), bind(low), bind(high), negated: negated)
        case .like(let lhs, let rhs, let negated): return .like(bind(lhs), bind(rhs), negated: negated)
        case .function(let name, let arguments): return .function(name, arguments.map(bind))
        }
    }
}

extension FilterNode.Literal {
    /// A claim's or a parameter's value as a literal (bytes and assets are
    /// not values a filter compares: `NULL`).
    init(_ value: CloudValue) {
        switch value {
        case .integer(let integer): self = .integer(integer)
        case .real(let real): self = .real(real)
        case .text(let text): self = .text(text)
        case .null, .bytes, .invalidText, .asset: self = .null
        }
    }
}
