#if Postgres
    import Foundation
    import GroupStoreCloud
    import PostgresNIO

    extension PostgresRemote {
        public func missingAssets(_ hashes: [String]) async throws -> Set<String> {
            try await missingAssets(hashes, as: nil)
        }

        func missingAssets(_ hashes: [String], as role: String?) async throws -> Set<String> {
            guard !hashes.isEmpty else { return [] }
            return try await perform("look for assets", as: role) { session in
                var binds = PostgresBindings()
                binds.append(hashes)
                let rows = try await session.cells(
                    PostgresQuery(unsafeSQL: "SELECT hash FROM groupstore.assets WHERE hash = ANY($1::text[])", binds: binds))
                return Set(hashes).subtracting(rows.compactMap { $0.first ?? nil })
            }
        }

        /// Stores an asset's bytes (idempotent); the server checks them against
        /// the hash.
        public func uploadAsset(_ asset: CloudAsset, bytes: [UInt8]) async throws {
            try await uploadAsset(asset, bytes: bytes, as: nil)
        }

        func uploadAsset(_ asset: CloudAsset, bytes: [UInt8], as role: String?) async throws {
            guard asset.size == bytes.count, CloudAsset(bytes: bytes).hash == asset.hash else {
                throw CloudSyncError(
                    .badRemote,
                    "asset \(asset.hash) (\(asset.size) bytes) does not match the \(bytes.count) bytes given for it; nothing was stored on \(displayName)"
                )
            }
            try await perform("upload an asset", as: role) { session in
                var binds = PostgresBindings()
                binds.append(asset.hash)
                binds.append(String(asset.size))
                binds.append(ByteBuffer(bytes: bytes))
                _ = try await session.result(
                    PostgresQuery(
                        unsafeSQL:
                            "INSERT INTO groupstore.assets (hash, size, bytes) VALUES ($1, $2::bigint, $3) ON CONFLICT (hash, owner) DO NOTHING",
                        binds: binds))
            }
        }

        public func downloadAsset(_ asset: CloudAsset) async throws -> [UInt8] {
            try await downloadAsset(asset, as: nil)
        }

        func downloadAsset(_ asset: CloudAsset, as role: String?) async throws -> [UInt8] {
            try await perform("download an asset", as: role) { session in
                var binds = PostgresBindings()
                binds.append(asset.hash)
                let rows = try await session.result(
                    PostgresQuery(unsafeSQL: "SELECT bytes FROM groupstore.assets WHERE hash = $1 LIMIT 1", binds: binds)
                ).rows
                guard let row = rows.first, var buffer = try row.first?.decode(ByteBuffer?.self) else {
                    throw CloudSyncError(.badRemote, "\(displayName) has no asset \(asset.hash) (\(asset.size) bytes)")
                }
                return buffer.readBytes(length: buffer.readableBytes) ?? []
            }
        }

        /// A tag names the tag number the server issued; the server deleted the
        /// record since if it holds its tombstone (or pruned tombstones up to
        /// that number); it never issued the tag — it was set up again, or
        /// restored from an older copy — if the tag is of another epoch or
        /// beyond the numbers issued.
        public func forgotten(_ records: [CloudRecordID: String]) async throws -> Set<CloudRecordID> {
            try await forgotten(records, as: nil)
        }

        func forgotten(_ records: [CloudRecordID: String], as role: String?) async throws -> Set<CloudRecordID> {
            guard !records.isEmpty else { return [] }
            return try await perform("check records the listing lacks", as: role) { session in
                let epoch = try await epoch(session)
                let meta = try await session.cells(
                    """
                    SELECT (SELECT last_value FROM groupstore.tags)::text, (SELECT value FROM groupstore.meta WHERE key = 'horizon_tag')
                    """)
                let issued = Int64((meta.first?[0] ?? nil) ?? "0") ?? 0
                let horizon = Int64((meta.first?[1] ?? nil) ?? "0") ?? 0
                var binds = PostgresBindings()
                binds.append(Array(Set(records.keys.map(\.name))))
                let rows = try await session.cells(
                    PostgresQuery(
                        unsafeSQL: "SELECT zone, type, name, tag::text FROM groupstore.tombstones WHERE name = ANY($1::text[])",
                        binds: binds))
                // The number of each record's last delete.
                var deletes: [String: Int64] = [:]
                for row in rows {
                    let key = "\(row[0] ?? "")\u{0}\((row[1] ?? "").lowercased())\u{0}\(row[2] ?? "")"
                    deletes[key] = max(deletes[key] ?? .min, Int64((row[3] ?? nil) ?? "") ?? .max)
                }
                var forgotten = Set<CloudRecordID>()
                for (id, tag) in records {
                    guard let number = PostgresTag.number(tag, epoch: epoch), number <= issued else {
                        forgotten.insert(id)
                        continue
                    }
                    // Deleted since that version. A delete older than it (the record was made again after it,
                    // and the server lost that: a standby promoted, a copy restored) did not delete it.
                    if let deleted = deletes["\(id.zone)\u{0}\(id.type.lowercased())\u{0}\(id.name)"] {
                        if deleted > number { continue }
                    } else if number <= horizon {
                        continue  // its tombstone may have been pruned with the log
                    }
                    forgotten.insert(id)
                }
                return forgotten
            }
        }
    }
#endif  // Postgres
