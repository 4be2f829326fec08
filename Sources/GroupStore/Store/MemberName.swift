/// The name a process uses in a group, like an app's bundle identifier.
///
/// One to 128 characters from `A-Z a-z 0-9 . _ - @ +`, not starting with `.`
/// or `-`. So a name is always one safe path component: no `/`, no `..`, no
/// control characters, nothing a shell or a file system treats specially.
public struct MemberName: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The longest name accepted, in bytes.
    public static let maximumLength = 128

    /// The name.
    public let rawValue: String

    /// Validates `rawValue`.
    /// - Throws: ``GroupStoreError/Code/invalidMemberName`` naming the problem.
    public init(_ rawValue: String) throws {
        if let problem = MemberName.problem(with: rawValue) {
            throw GroupStoreError(.invalidMemberName, "invalid member name \(MemberName.quoted(rawValue)): \(problem)")
        }
        self.rawValue = rawValue
    }

    /// Why `name` is not a valid member name, or `nil` if it is.
    public static func problem(with name: String) -> String? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return "it is empty" }
        if bytes.count > maximumLength { return "it is \(bytes.count) bytes long (at most \(maximumLength))" }
        if bytes.contains(UInt8(ascii: "/")) { return "it contains '/'" }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "it contains a control character" }
        if bytes[0] == UInt8(ascii: ".") || bytes[0] == UInt8(ascii: "-") { return "it starts with '.' or '-'" }
        if !bytes.allSatisfy(isAllowed) { return "only A-Z a-z 0-9 . _ - @ + are allowed" }
        return nil
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "@"), UInt8(ascii: "+"):
            return true
        default:
            return false
        }
    }

    /// A printable, bounded rendering of a rejected name for messages.
    static func quoted(_ name: String) -> String {
        var shown = ""
        for scalar in name.unicodeScalars.prefix(40) {
            shown += scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        if name.unicodeScalars.count > 40 { shown += "…" }
        return "'\(shown)'"
    }

    public var description: String { rawValue }
    public static func < (lhs: MemberName, rhs: MemberName) -> Bool { lhs.rawValue < rhs.rawValue }
}
