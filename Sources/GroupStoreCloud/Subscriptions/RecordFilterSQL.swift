import Foundation

/// A subscription evaluated by SQLite on records as the embedded and
/// in-memory remotes keep them: a type name, and the fields as
/// ``CloudFieldsJSON`` text, each value tagged by its class
/// (`{"site":{"i":7}}`). A column reads as the value SQLite would hold
/// (integer, real or text; bytes and assets as `NULL`), so a filter means
/// on a remote what it means on the host's own table.
package enum RecordFilterSQL {
    /// A SQLite expression that is 1 when the record of type `type` whose
    /// fields are `fields` (SQL expressions; `fields` `NULL`: no live record)
    /// is in `subscription`'s subset, and 0 when not. `types`: the record
    /// types the remote knows (the filters' columns are found there,
    /// ignoring case).
    /// - Throws: ``CloudSyncError/Code/invalidConfiguration`` for a filter
    ///   naming a column its type lacks.
    package static func matches(
        fields: String, type: String, subscription: CloudSubscription, types: [CloudRecordType], claims: [String: CloudValue] = [:]
    ) throws -> String {
        var cases = "CASE WHEN \(fields) IS NULL THEN 0"
        for name in subscription.filters.keys.sorted() {
            guard let filter = subscription.filter(for: name, claims: claims) else { continue }
            // A type the remote never prepared has no records: nothing to match.
            guard let recordType = types.first(where: { $0.name.lowercased() == name }) else { continue }
            try filter.check(columns: recordType.columns.map(\.name), table: recordType.name)
            let columns = Dictionary(recordType.columns.map { ($0.name.lowercased(), $0.name) }, uniquingKeysWith: { first, _ in first })
            let sql = FilterSQL(dialect: .sqlite) { column in
                value(of: columns[column.lowercased()] ?? column, in: fields)
            }
            cases += " WHEN lower(\(type)) = \(FilterSQL.quoted(name)) THEN (\(sql.sql(filter)) IS TRUE)"
        }
        return cases + " ELSE 1 END"
    }

    /// The value of `column` in the fields JSON `fields`, as SQLite holds it.
    private static func value(of column: String, in fields: String) -> String {
        let key = "$.\"" + column.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        let path = { (tag: String) in FilterSQL.quoted(key + "." + tag) }
        return
            "coalesce(json_extract(\(fields), \(path("i"))), json_extract(\(fields), \(path("r"))), json_extract(\(fields), \(path("t"))))"
    }
}
