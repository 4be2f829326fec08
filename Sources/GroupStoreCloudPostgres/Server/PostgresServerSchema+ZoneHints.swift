#if Postgres
    extension PostgresServerSchema {
        /// Migration `groupstore.postgres.zone-hints`: notifications that say
        /// which zones changed, in a form only a gateway reads (``PostgresNotice``),
        /// so that a gateway hints only the clients of those zones.
        ///
        /// - the role `groupstore_gateway` and the table `groupstore.hint_key`
        ///   (one random key) that only it and the schema's owner read;
        /// - `groupstore.hint_tag(text)`: the tag of a zone or a member under the
        ///   key (not executable by users: it would tell them the tags);
        /// - `groupstore.notify_hint(tags)`: `NOTIFY groupstore` with the
        ///   writer's origin and the tags (`*` past 400 of them);
        /// - `groupstore.rows_written()` as before, notifying the zones of the
        ///   statement's rows; the shares' triggers notify the zone shared and
        ///   the member (`m:`), so that a member's clients learn of it at once.
        ///
        /// The payload still begins with the origin: a remote of an older build
        /// reads the whole payload as an origin, never its own, and takes every
        /// notification as a hint, as it did for other writers.
        static let zoneHints = #"""
            DO $do$ BEGIN
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'groupstore_gateway') THEN
                CREATE ROLE groupstore_gateway NOLOGIN;
              END IF;
            END $do$;
            GRANT USAGE ON SCHEMA groupstore TO groupstore_gateway;
            CREATE TABLE IF NOT EXISTS groupstore.hint_key (key text NOT NULL);
            INSERT INTO groupstore.hint_key (key) SELECT gen_random_uuid()::text WHERE NOT EXISTS (SELECT 1 FROM groupstore.hint_key);
            REVOKE ALL ON groupstore.hint_key FROM PUBLIC;
            GRANT SELECT ON groupstore.hint_key TO groupstore_gateway;

            CREATE OR REPLACE FUNCTION groupstore.hint_tag(p_text text) RETURNS text
            LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
            RETURN left(encode(sha256(convert_to((SELECT k.key FROM groupstore.hint_key AS k LIMIT 1) || ':' || p_text, 'UTF8')), 'hex'), 16);
            REVOKE ALL ON FUNCTION groupstore.hint_tag(text) FROM PUBLIC;

            CREATE OR REPLACE FUNCTION groupstore.notify_hint(p_tags text[]) RETURNS void
            LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_payload text := coalesce(current_setting('groupstore.origin', true), '');
            BEGIN
              IF p_tags IS NULL OR cardinality(p_tags) = 0 OR cardinality(p_tags) > 400 THEN
                v_payload := v_payload || ' *';
              ELSE
                v_payload := v_payload || ' ' || array_to_string(p_tags, ' ');
              END IF;
              PERFORM pg_notify('groupstore', v_payload);
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.notify_hint(text[]) FROM PUBLIC;

            CREATE OR REPLACE FUNCTION groupstore.rows_written() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $fn$
            DECLARE
              v_tags text[];
            BEGIN
              IF TG_OP = 'INSERT' THEN
                IF NOT EXISTS (SELECT 1 FROM gs_new) THEN RETURN NULL; END IF;
                INSERT INTO groupstore.change_log (zone, type, name) SELECT gs_zone, TG_TABLE_NAME, gs_name FROM gs_new ORDER BY gs_tag;
                DELETE FROM groupstore.tombstones AS t USING gs_new AS n
                  WHERE t.zone = n.gs_zone COLLATE "default" AND t.type = TG_TABLE_NAME::text AND t.name = n.gs_name COLLATE "default";
                SELECT array_agg('z:' || groupstore.hint_tag(z)) INTO v_tags FROM (SELECT DISTINCT gs_zone::text AS z FROM gs_new) AS d;
              ELSIF TG_OP = 'UPDATE' THEN
                IF NOT EXISTS (SELECT 1 FROM gs_new) THEN RETURN NULL; END IF;
                INSERT INTO groupstore.change_log (zone, type, name) SELECT gs_zone, TG_TABLE_NAME, gs_name FROM gs_new ORDER BY gs_tag;
                DELETE FROM groupstore.asset_refs AS r USING gs_old AS o
                  WHERE (o.gs_extra <> '{}' OR TG_ARGV[0] = 'true') AND r.zone = o.gs_zone COLLATE "default" AND r.type = TG_TABLE_NAME::text AND r.name = o.gs_name COLLATE "default";
                SELECT array_agg('z:' || groupstore.hint_tag(z)) INTO v_tags FROM (SELECT DISTINCT gs_zone::text AS z FROM gs_new) AS d;
              ELSE
                IF NOT EXISTS (SELECT 1 FROM gs_old) THEN RETURN NULL; END IF;
                INSERT INTO groupstore.change_log (zone, type, name) SELECT gs_zone, TG_TABLE_NAME, gs_name FROM gs_old ORDER BY gs_tag;
                INSERT INTO groupstore.tombstones (zone, type, name, owner, tag)
                  SELECT gs_zone, TG_TABLE_NAME, gs_name, gs_owner, nextval('groupstore.tags') FROM gs_old ORDER BY gs_tag
                  ON CONFLICT (zone, type, name) DO UPDATE SET owner = excluded.owner, tag = excluded.tag;
                DELETE FROM groupstore.asset_refs AS r USING gs_old AS o
                  WHERE (o.gs_extra <> '{}' OR TG_ARGV[0] = 'true') AND r.zone = o.gs_zone COLLATE "default" AND r.type = TG_TABLE_NAME::text AND r.name = o.gs_name COLLATE "default";
                SELECT array_agg('z:' || groupstore.hint_tag(z)) INTO v_tags FROM (SELECT DISTINCT gs_zone::text AS z FROM gs_old) AS d;
              END IF;
              -- TG_ARGV[0]: whether the table has jsonb columns, which may hold assets too.
              IF TG_OP <> 'DELETE' THEN
                INSERT INTO groupstore.asset_refs (zone, type, name, hash)
                  SELECT DISTINCT n.gs_zone, TG_TABLE_NAME, n.gs_name, h.h
                  FROM gs_new AS n, groupstore.asset_hashes(CASE WHEN TG_ARGV[0] = 'true' THEN to_jsonb(n) END, n.gs_extra) AS h(h)
                  WHERE n.gs_extra <> '{}' OR TG_ARGV[0] = 'true';
              END IF;
              PERFORM groupstore.notify_hint(v_tags);
              RETURN NULL;
            END $fn$;

            -- After each statement on the shares (the schema owner's rights, to tag):
            -- the zones shared and the members, so that their clients fetch, or
            -- leave, a zone at once.
            CREATE OR REPLACE FUNCTION groupstore.shares_written() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_tags text[];
            BEGIN
              IF TG_OP = 'INSERT' THEN
                SELECT array_agg(DISTINCT t) INTO v_tags FROM (
                  SELECT 'm:' || groupstore.hint_tag('member:' || member) AS t FROM gs_new
                  UNION ALL SELECT 'z:' || groupstore.hint_tag('shared/' || owner || '/' || zone) FROM gs_new) AS x;
              ELSIF TG_OP = 'UPDATE' THEN
                SELECT array_agg(DISTINCT t) INTO v_tags FROM (
                  SELECT 'm:' || groupstore.hint_tag('member:' || member) AS t FROM gs_new
                  UNION ALL SELECT 'z:' || groupstore.hint_tag('shared/' || owner || '/' || zone) FROM gs_new
                  UNION ALL SELECT 'm:' || groupstore.hint_tag('member:' || member) FROM gs_old
                  UNION ALL SELECT 'z:' || groupstore.hint_tag('shared/' || owner || '/' || zone) FROM gs_old) AS x;
              ELSE
                SELECT array_agg(DISTINCT t) INTO v_tags FROM (
                  SELECT 'm:' || groupstore.hint_tag('member:' || member) AS t FROM gs_old
                  UNION ALL SELECT 'z:' || groupstore.hint_tag('shared/' || owner || '/' || zone) FROM gs_old) AS x;
              END IF;
              IF v_tags IS NOT NULL THEN PERFORM groupstore.notify_hint(v_tags); END IF;
              RETURN NULL;
            END $fn$;
            DROP TRIGGER IF EXISTS gs_notify ON groupstore.shares;
            DROP TRIGGER IF EXISTS gs_shares_inserted ON groupstore.shares;
            DROP TRIGGER IF EXISTS gs_shares_updated ON groupstore.shares;
            DROP TRIGGER IF EXISTS gs_shares_deleted ON groupstore.shares;
            CREATE TRIGGER gs_shares_inserted AFTER INSERT ON groupstore.shares REFERENCING NEW TABLE AS gs_new
              FOR EACH STATEMENT EXECUTE FUNCTION groupstore.shares_written();
            CREATE TRIGGER gs_shares_updated AFTER UPDATE ON groupstore.shares REFERENCING OLD TABLE AS gs_old NEW TABLE AS gs_new
              FOR EACH STATEMENT EXECUTE FUNCTION groupstore.shares_written();
            CREATE TRIGGER gs_shares_deleted AFTER DELETE ON groupstore.shares REFERENCING OLD TABLE AS gs_old
              FOR EACH STATEMENT EXECUTE FUNCTION groupstore.shares_written();
            """#
    }
#endif  // Postgres
