#if Postgres
    import GroupStore
    import GroupStoreCloud

    /// One notification on the `groupstore` channel, as a gateway reads it:
    /// who wrote, and which zones changed, named by their hint tags.
    ///
    /// The payload (server migration `groupstore.postgres.zone-hints`) is the
    /// writer's origin, then the tags separated by spaces: `z:<tag>` for a zone
    /// whose records changed, `m:<tag>` for a user whose shares changed, or
    /// `*` for too many to name. A tag is the first 16 hexadecimal digits of
    /// SHA-256 of the server's hint key, `:`, and the zone (`private/alice`) or
    /// `member:` and the user, so a listener that cannot read the key (any role
    /// but `groupstore_gateway`) learns nothing of who wrote where.
    package struct PostgresNotice: Sendable, Hashable {
        /// The origin the writing session set (empty for a writer outside GroupStore).
        package var origin: String
        /// The `z:` and `m:` tags; `nil` when any zone may have changed (a
        /// statement over many zones, a server set up before the tags, or a
        /// listener that (re)connected and may have missed notifications).
        package var tags: Set<String>?

        package init(origin: String, tags: Set<String>?) {
            self.origin = origin
            self.tags = tags
        }

        /// Reads a payload: the origin, then the tags.
        package init(payload: String) {
            let words = payload.split(separator: " ", omittingEmptySubsequences: false)
            origin = words.first.map(String.init) ?? ""
            let rest = words.dropFirst().filter { !$0.isEmpty }.map(String.init)
            tags = rest.isEmpty || rest.contains("*") ? nil : Set(rest)
        }

        /// The hint tag of `text` (a zone's description, or `member:` and a user)
        /// under `key`, as the server computes it.
        package static func tag(of text: String, key: String) -> String {
            String(SHA256.hex(Array((key + ":" + text).utf8)).prefix(16))
        }
    }
#endif  // Postgres
