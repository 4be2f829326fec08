import Foundation

/// A subscription evaluated by SQLite on records as the embedded and
/// in-memory remotes keep them: a type name, the record's name, and the
/// fields as ``CloudFieldsJSON`` text, each value tagged by its class
/// (`{"site":{"i":7}}`). A column reads as the value SQLite would hold
/// (integer, real or text; bytes and assets as `NULL`), so a filter means
/// on a remote what it means on the host's own table; a key column reads
/// from the record's name (``RecordName``: a text key is its name; a
/// composite key's part is its JSON array's element; a key named in hex,
/// a blob or unusual text, reads as `NULL`).
package enum RecordFilterSQL {
    /// A SQLite expression that is 1 when the record of type `type` named
    /// `name` whose fields are `fields` (SQL expressions; `fields` `NULL`:
    /// no live record) is in `subscription`'s subset, and 0 when not.
    /// `types`: the record types the remote knows (the filters' columns are
    /// found there, ignoring case).
    /// - Throws: ``CloudSyncError/Code/invalidConfiguration`` for a filter
    ///   naming a column its type lacks.
    package static func matches(
        fields: String, type: String, name recordName: String, subscription: CloudSubscription, types: [CloudRecordType],
        claims: [String: CloudValue] = [:]
    ) throws -> String {
        var cases = "CASE WHEN \(fields) IS NULL THEN 0"
        for name in subscription.filters.keys.sorted() {
            guard let filter = subscription.filter(for: name, claims: claims) else { continue }
            // A type the remote never prepared has no records: nothing to match.
            guard let recordType = types.first(where: { $0.name.lowercased() == name }) else { continue }
            try filter.check(columns: recordType.columns.map(\.name), table: recordType.name)
            let columns = Dictionary(recordType.columns.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
            let keys = recordType.columns.filter(\.isKey).map(\.name)
            let sql = FilterSQL(dialect: .sqlite) { column in
                guard let found = columns[column.lowercased()] else { return "NULL" }
                guard found.isKey, let index = keys.firstIndex(of: found.name) else { return value(of: found.name, in: fields) }
                return key(index, of: keys.count, in: recordName)
            }
            cases += " WHEN lower(\(type)) = \(FilterSQL.quoted(name)) THEN (\(sql.sql(filter)) IS TRUE)"
        }
        return cases + " ELSE 1 END"
    }

    /// Key column `index` of `count` as the record name `name` holds it:
    /// plain text, or `NULL` for a name in hex (``RecordName``).
    private static func key(_ index: Int, of count: Int, in name: String) -> String {
        let part = count == 1 ? name : "json_extract(\(name), '$[\(index)]')"
        return "(SELECT CASE WHEN substr(p, 1, 4) IN ('hex:', 'txt:') THEN NULL ELSE p END FROM (SELECT \(part) AS p))"
    }

    /// The value of `column` in the fields JSON `fields`, as SQLite holds it.
    private static func value(of column: String, in fields: String) -> String {
        let key = "$.\"" + column.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        let path = { (tag: String) in FilterSQL.quoted(key + "." + tag) }
        return
            "coalesce(json_extract(\(fields), \(path("i"))), json_extract(\(fields), \(path("r"))), json_extract(\(fields), \(path("t"))))"
    }
}
