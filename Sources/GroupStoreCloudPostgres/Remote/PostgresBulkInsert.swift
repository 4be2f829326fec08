#if Postgres
    import Foundation
    import PostgresNIO

    /// New records of one table and zone in one statement: their values travel
    /// as one JSON array (a row per record, `null` for NULL), are unpacked and
    /// cast on the server, and inserted where no row has the name yet. The
    /// statement answers `(true, the row written…)` for each record written
    /// and `(false, the row as it was…)` for each that met a row (a conflict,
    /// or another user's public record), all from one snapshot; a record with
    /// neither answer met a row it cannot see. (A single write reads the row
    /// it met after the transaction instead: ``ModifyPlan/rowsMet(_:steps:_:)``.)
    ///
    /// One statement instead of one per record: the server parses, plans and
    /// runs the statement trigger (its NOTIFY) once per batch. The rows met are
    /// read by key (`= ANY` of the names not written), so the read costs
    /// nothing when every record was new, however large the table.
    enum PostgresBulkInsert {
        struct Row {
            var name: String
            /// Each column given, as text (`nil`: NULL).
            var texts: [String: String?]
            /// `gs_extra`, as JSON.
            var extra: String
            var editedAt: Double
        }

        static func query(_ table: PostgresTypedTable, zone: String, rows: [Row]) -> PostgresQuery {
            // The columns any record gives, in table order; the others are left to their default (NULL).
            let columns = table.columns.filter { column in rows.contains { $0.texts.keys.contains(column.name) } }
            var document: [[String?]] = []
            document.reserveCapacity(rows.count)
            for row in rows {
                var cells: [String?] = [row.name, row.extra, String(row.editedAt)]
                for column in columns { cells.append(row.texts[column.name] ?? nil) }
                document.append(cells)
            }
            let json = (try? JSONEncoder().encode(document)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
            let unpacked =
                ["r ->> 0 AS n", "r ->> 1 AS x", "r ->> 2 AS e"]
                + columns.indices.map { "r ->> \($0 + 3) AS c\($0)" }
            let names = ["gs_zone", "gs_name"] + columns.map { PostgresTypedTable.quote($0.name) } + ["gs_extra", "gs_edited_at"]
            let values =
                ["$1", "n"] + columns.enumerated().map { $0.element.type.cast("c\($0.offset)") }
                + ["x::jsonb", "to_timestamp(e::float8)"]
            var binds = PostgresBindings()
            binds.append(zone)
            binds.append(json)
            return PostgresQuery(
                unsafeSQL: """
                    WITH input AS (
                      SELECT \(unpacked.joined(separator: ", ")), o FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS a(r, o)
                    ), w AS (
                      INSERT INTO \(table.quoted) (\(names.joined(separator: ", ")))
                      SELECT \(values.joined(separator: ", ")) FROM input ORDER BY o
                      ON CONFLICT (gs_zone, gs_name) DO NOTHING
                      RETURNING \(table.selectList)
                    )
                    SELECT 'true', * FROM w
                    UNION ALL
                    SELECT 'false', \(table.selectList) FROM \(table.quoted)
                    WHERE gs_zone = $1 AND gs_name = ANY (ARRAY (SELECT n FROM input WHERE NOT EXISTS (SELECT 1 FROM w WHERE w.gs_name = input.n)))
                    """,
                binds: binds)
        }
    }
#endif  // Postgres
