#if Postgres
    extension PostgresServerSchema {
        /// Migration `groupstore.postgres.write-plans` (format 10):
        /// `groupstore.rows_written()` of `subscriptions` with its plans
        /// cached again, as PL/pgSQL caches them, but for the one statement
        /// whose plan depends on how many rows a statement wrote: the join of
        /// an update's old and new rows, now planned for each statement
        /// (`EXECUTE`). `rows-written-plan` planned every statement of the
        /// trigger for each write instead, to the same end: about 0.3 ms of
        /// the server's time on every write (measured with `pgbench`,
        /// one-row inserts: 0.59 ms each with it, 0.28 ms without).
        static let writePlans = #"""
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
                -- Planned for this statement's rows (EXECUTE): a plan cached for one row joined
                -- a large update's tables with a nested loop.
                EXECUTE 'INSERT INTO groupstore.change_log (zone, type, name, previous)
                  SELECT n.gs_zone, $1, n.gs_name, to_jsonb(o) FROM gs_new AS n
                  LEFT JOIN gs_old AS o ON o.gs_zone = n.gs_zone AND o.gs_name = n.gs_name ORDER BY n.gs_tag' USING TG_TABLE_NAME;
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
            UPDATE groupstore.meta SET value = '10' WHERE key = 'format';
            """#
    }
#endif  // Postgres
