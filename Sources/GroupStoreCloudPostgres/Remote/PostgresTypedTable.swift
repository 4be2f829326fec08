#if Postgres
    import Foundation
    import GroupStoreCloud

    /// A record type's typed table on the server, as read from its catalog:
    /// its scope, key columns and the type of each mapped column.
    struct PostgresTypedTable: Sendable {
        let name: String
        let scope: CloudScope
        let keyColumns: [String]
        /// Every mapped column the server has, keys included, in table order
        /// (columns of a type GroupStore does not map are left out).
        let columns: [(name: String, type: PostgresColumnType)]

        /// `public."name"`.
        var quoted: String { "public." + Self.quote(name) }

        static func quote(_ identifier: String) -> String {
            "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }

        /// The table of record type `name`, matched as SQLite matches table
        /// names: exactly, or else ignoring case (a type is one per table).
        static func named(_ name: String, in tables: [String: PostgresTypedTable]) -> PostgresTypedTable? {
            tables[name] ?? tables.values.first { $0.name.lowercased() == name.lowercased() }
        }

        func type(of column: String) -> PostgresColumnType? {
            columns.first { $0.name == column }?.type
        }

        /// The system columns read with every record, then each mapped column as text.
        var selectList: String {
            (["gs_name", "gs_tag::text", "gs_owner", "extract(epoch from gs_edited_at)::text", "gs_edited_by", "gs_extra::text"]
                + columns.map { $0.type.select(Self.quote($0.name)) }).joined(separator: ", ")
        }

        /// A record from a row read with ``selectList``.
        func record(_ cells: [String?], zone: CloudZone, epoch: String) throws -> CloudRecord {
            guard cells.count == 6 + columns.count, let name = cells[0], let tagText = cells[1], let owner = cells[2],
                let editedText = cells[3], let edited = Double(editedText), let editedBy = cells[4]
            else {
                throw CloudSyncError(.badRemote, "a row of table \(name) on the server is missing its system columns")
            }
            var fields: CloudFields = [:]
            let keys = Set(keyColumns)
            for (index, column) in columns.enumerated() where !keys.contains(column.name) {
                if let value = column.type.value(cells[6 + index]) { fields[column.name] = value }
            }
            if let extraText = cells[5], extraText != "{}" {
                let extra = (try? CloudFieldsJSON.decode(extraText)) ?? [:]
                // Columns the table lacks too: a client that knew more columns kept them there.
                for (column, value) in extra where !keys.contains(column) {
                    fields[column] = PostgresColumnType.fixText(value)
                }
            }
            return CloudRecord(
                id: CloudRecordID(zone: zone, type: self.name, name: name), tag: PostgresTag.text(tagText, epoch: epoch), fields: fields,
                owner: owner, editedAt: Date(timeIntervalSince1970: edited), editedBy: editedBy)
        }
    }

    /// Change tags: the server's tag number and the first 8 characters of the
    /// remote's epoch, so a tag from another server (or a server set up again)
    /// never matches.
    enum PostgresTag {
        static func text(_ number: String, epoch: String) -> String { "\(number)-\(epoch.prefix(8))" }

        /// The tag number of `tag` if it was issued by this remote, else `nil`.
        static func number(_ tag: String, epoch: String) -> Int64? {
            let parts = tag.split(separator: "-", maxSplits: 1)
            guard parts.count == 2, parts[1] == epoch.prefix(8), let number = Int64(parts[0]) else { return nil }
            return number
        }
    }
#endif  // Postgres
