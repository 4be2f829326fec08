import GRDB
import GroupStore

/// A synced table, as mapped from its SQLite schema: how its key names a
/// record, which columns are fields, what they reference.
struct MappedTable: Hashable, Sendable {
    /// How a row's key becomes a record name.
    enum KeyShape: Hashable, Sendable {
        /// A single TEXT key: the name is the text.
        case text(String)
        /// A single BLOB key (a UUID): the name is `hex:` and its bytes in hex.
        case blob(String)
        /// A link table: a composite key made of references; the name is the
        /// JSON array of the referenced record names, so two hosts adding the
        /// same link make one record.
        case link([String])

        var columns: [String] {
            switch self {
            case .text(let column), .blob(let column): return [column]
            case .link(let columns): return columns
            }
        }
    }

    /// The table's name as SQLite has it.
    var name: String
    var scope: CloudScope
    var key: KeyShape
    /// Every mapped column, key columns first.
    var columns: [CloudColumn]
    /// Blob columns always stored as assets.
    var assetColumns: Set<String>
    /// Tables this one references (parents), without itself.
    var parents: Set<String>

    var keyColumns: [String] { key.columns }
    var fieldColumns: [String] { columns.filter { !$0.isKey }.map(\.name) }

    var recordType: CloudRecordType { CloudRecordType(name: name, scope: scope, columns: columns) }
}
