#if Postgres
    extension PostgresServerSchema {
        /// Migration `groupstore.postgres.subscriptions` (format 7): each
        /// change-log entry of an update or a delete keeps the row as it was
        /// before the change (`change_log.previous`, the typed row as `jsonb`;
        /// `NULL` for an insert, and for entries logged before this format).
        /// A subscribed fetch reads, for each record in its page, the
        /// `previous` of the record's first entry after the token: what the
        /// host's subset held of it then (see `PostgresRemote+Subscriptions`).
        ///
        /// - `groupstore.rows_written()` as in `delete-times`, with
        ///   `previous` written. The update's old and new rows are matched
        ///   by key with a hash join, allowed for that statement only (the
        ///   function's `SET` restores the setting when it returns).
        /// - What it costs: the log holds one copy of each updated or deleted
        ///   row until `groupstore.compact_log` prunes it.
        static let subscriptions = #"""
            ALTER TABLE groupstore.change_log ADD COLUMN IF NOT EXISTS previous jsonb;

            CREATE OR REPLACE FUNCTION groupstore.rows_written() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $fn$
            DECLARE
              v_tags text[];
              v_edited timestamptz;
            BEGIN
              IF TG_OP = 'INSERT' THEN
                IF NOT EXISTS (SELECT 1 FROM gs_new) THEN RETURN NULL; END IF;
                INSERT INTO groupstore.change_log (zone, type, name) SELECT gs_zone, TG_TABLE_NAME, gs_name FROM gs_new ORDER BY gs_tag;
                DELETE FROM groupstore.tombstones AS t USING gs_new AS n
                  WHERE t.zone = n.gs_zone COLLATE "default" AND t.type = TG_TABLE_NAME::text AND t.name = n.gs_name COLLATE "default";
                SELECT array_agg('z:' || groupstore.hint_tag(z)) INTO v_tags FROM (SELECT DISTINCT gs_zone::text AS z FROM gs_new) AS d;
              ELSIF TG_OP = 'UPDATE' THEN
                IF NOT EXISTS (SELECT 1 FROM gs_new) THEN RETURN NULL; END IF;
                -- Transition tables have no index: the old rows are found by key in a hash.
                PERFORM set_config('enable_hashjoin', 'on', true);
                INSERT INTO groupstore.change_log (zone, type, name, previous)
                  SELECT n.gs_zone, TG_TABLE_NAME, n.gs_name, to_jsonb(o) FROM gs_new AS n
                  LEFT JOIN gs_old AS o ON o.gs_zone = n.gs_zone AND o.gs_name = n.gs_name ORDER BY n.gs_tag;
                PERFORM set_config('enable_hashjoin', 'off', true);
                DELETE FROM groupstore.asset_refs AS r USING gs_old AS o
                  WHERE (o.gs_extra <> '{}' OR TG_ARGV[0] = 'true') AND r.zone = o.gs_zone COLLATE "default" AND r.type = TG_TABLE_NAME::text AND r.name = o.gs_name COLLATE "default";
                SELECT array_agg('z:' || groupstore.hint_tag(z)) INTO v_tags FROM (SELECT DISTINCT gs_zone::text AS z FROM gs_new) AS d;
              ELSE
                IF NOT EXISTS (SELECT 1 FROM gs_old) THEN RETURN NULL; END IF;
                INSERT INTO groupstore.change_log (zone, type, name, previous)
                  SELECT o.gs_zone, TG_TABLE_NAME, o.gs_name, to_jsonb(o) FROM gs_old AS o ORDER BY o.gs_tag;
                -- The delete's edit time: the bridge's (set by its DELETE), raised above the version
                -- deleted, never after the server's clock; the server's clock for any other writer.
                v_edited := to_timestamp(nullif(current_setting('groupstore.delete_edited_at', true), '')::float8);
                PERFORM set_config('groupstore.delete_edited_at', '', true);
                INSERT INTO groupstore.tombstones (zone, type, name, owner, tag, edited_at)
                  SELECT gs_zone, TG_TABLE_NAME, gs_name, gs_owner, nextval('groupstore.tags'),
                    LEAST(GREATEST(coalesce(v_edited, clock_timestamp()), gs_edited_at + interval '1 millisecond'), clock_timestamp())
                  FROM gs_old ORDER BY gs_tag
                  ON CONFLICT (zone, type, name) DO UPDATE SET owner = excluded.owner, tag = excluded.tag, edited_at = excluded.edited_at;
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
            UPDATE groupstore.meta SET value = '7' WHERE key = 'format';
            """#

        /// Migration `groupstore.postgres.rows-written-plan` (format 8):
        /// `groupstore.rows_written()` of `subscriptions`, planned for each
        /// statement (`plan_cache_mode = force_custom_plan`). The plan
        /// PL/pgSQL cached after a few small updates in a session joined an
        /// update's transition tables with a nested loop sized for one row:
        /// a 40,000-row update in that session ran for minutes (0.5 s in a
        /// fresh one).
        static let rowsWrittenPlan = #"""
            ALTER FUNCTION groupstore.rows_written() SET plan_cache_mode = force_custom_plan;
            UPDATE groupstore.meta SET value = '8' WHERE key = 'format';
            """#
    }
#endif  // Postgres
