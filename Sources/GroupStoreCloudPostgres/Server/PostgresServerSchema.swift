#if Postgres
    import GroupStore
    import GroupStoreCloud

    /// The server side of a PostgreSQL remote (format 6), created and upgraded by
    /// ``PostgresRemote/setup(url:logger:)`` (`groupstore cloud setup`), run by a
    /// role that may create schemas and roles:
    ///
    /// - schema `groupstore`: `meta` (kind, format, epoch, horizon), `types` (the
    ///   record types: scope, columns, key), `change_log` (one row per changed
    ///   record: `seq`, the writing transaction `tx`, zone, type, name — filled by
    ///   triggers), `tombstones` (deleted records and their last tag), `assets`
    ///   (content-addressed blobs, checked against their SHA-256 by the server);
    ///   the sequence `tags` issues change tags; `shares` (format 2: who each
    ///   shared zone is shared with, read-only or read-write; each owner manages
    ///   the shares of their zones, each member reads their own);
    /// - `groupstore.feed(zone, tx, seq, limit)` (format 3): a page of the change
    ///   feed behind the fence, read as the calling role, with its plans cached
    ///   for the session;
    /// - `groupstore.may_read(zone)` / `may_write(zone)`: the rules of the
    ///   scopes, used by every row-level security policy;
    /// - role `groupstore_user`: what a user role is granted to sync;
    /// - `groupstore.prepare_type(name, scope, columns)`: run with the schema
    ///   owner's rights, to create a synced table's **typed table** in
    ///   schema `public` — the same name and columns, plus system columns with the
    ///   reserved prefix `gs_` — with row-level security enabled and forced, its
    ///   policies and its triggers (public and shared types by the schema's
    ///   owner only; private ones by any user: format 5, ``declaredTypes``);
    /// - a row trigger that gives a row written with plain SQL its owner (the
    ///   writing role), zone, name, tag and edit time; statement triggers that
    ///   log every change of the statement at once (transition tables) and
    ///   send `NOTIFY groupstore` with the writing session's origin as the
    ///   payload (the setting ``originSetting``, a random string a remote sets
    ///   in its own transactions, empty for other writers), and nothing about
    ///   the rows: every user can see notifications.
    enum PostgresServerSchema {
        /// `meta.kind` of every GroupStore remote.
        static let kind = "groupstore-cloud-remote"
        /// The format this code writes, and the newest it reads.
        static let format = 11
        /// The NOTIFY channel.
        static let channel = "groupstore"
        /// The transaction-local setting whose value a write's notification
        /// carries: the remote's origin (see ``PushHints``).
        static let originSetting = "groupstore.origin"
        /// Column types a typed table's mapped columns may have.
        static let columnTypes = ["text", "bigint", "double precision", "boolean", "timestamp(3) without time zone", "bytea", "jsonb"]

        /// The ordered migrations of the server schema (``PostgresMigrator``).
        /// The first is the whole schema of format 3 as it shipped before
        /// migrations were kept: every statement of it is idempotent, so a
        /// server of format 1, 2 or 3 set up by an older build runs it once and
        /// is brought to format 3. A change to the schema is a new migration,
        /// never an edit (`MigrationChecksumTests`).
        static let migrations = [
            SchemaMigration("groupstore.postgres.v3", sql: script),
            SchemaMigration("groupstore.postgres.v4", sql: formatFour),
            SchemaMigration("groupstore.postgres.zone-hints", sql: zoneHints),
            SchemaMigration("groupstore.postgres.declared-types", sql: declaredTypes),
            SchemaMigration("groupstore.postgres.delete-times", sql: deleteTimes),
            SchemaMigration("groupstore.postgres.history-guard", sql: historyGuard),
            SchemaMigration("groupstore.postgres.subscriptions", sql: subscriptions),
            SchemaMigration("groupstore.postgres.rows-written-plan", sql: rowsWrittenPlan),
            SchemaMigration("groupstore.postgres.fleet", sql: fleet),
            SchemaMigration("groupstore.postgres.write-plans", sql: writePlans),
            SchemaMigration("groupstore.postgres.host-reports", sql: hostReports),
        ]
        /// The role whose members read the key of the notifications' zone tags
        /// (a gateway's login role: ``PostgresNotice``).
        static let gatewayRole = "groupstore_gateway"

        /// Creates what is missing and replaces the functions (idempotent). Run
        /// in one transaction.
        static let script = #"""
            DO $do$ BEGIN
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'groupstore_user') THEN
                CREATE ROLE groupstore_user NOLOGIN;
              END IF;
            END $do$;
            CREATE SCHEMA IF NOT EXISTS groupstore;
            REVOKE ALL ON SCHEMA groupstore FROM PUBLIC;
            GRANT USAGE ON SCHEMA groupstore TO groupstore_user;
            GRANT USAGE ON SCHEMA public TO groupstore_user;

            CREATE TABLE IF NOT EXISTS groupstore.meta (key text PRIMARY KEY, value text NOT NULL);
            INSERT INTO groupstore.meta (key, value) VALUES
              ('kind', 'groupstore-cloud-remote'), ('format', '3'), ('epoch', gen_random_uuid()::text),
              ('horizon_tx', '0'), ('horizon_seq', '0'), ('horizon_tag', '0')
            ON CONFLICT (key) DO NOTHING;

            CREATE TABLE IF NOT EXISTS groupstore.types (
              name text PRIMARY KEY,
              scope text NOT NULL,
              columns jsonb NOT NULL,
              key_columns text[] NOT NULL,
              key_bytea boolean[] NOT NULL
            );
            ALTER TABLE groupstore.types DROP CONSTRAINT IF EXISTS types_scope_check;
            ALTER TABLE groupstore.types ADD CONSTRAINT types_scope_check CHECK (scope IN ('private', 'public', 'shared'));
            UPDATE groupstore.meta SET value = '3' WHERE key = 'format' AND value::int < 3;
            CREATE SEQUENCE IF NOT EXISTS groupstore.tags;
            CREATE TABLE IF NOT EXISTS groupstore.change_log (
              seq bigserial PRIMARY KEY,
              tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
              zone text NOT NULL,
              type text NOT NULL,
              name text NOT NULL
            );
            CREATE INDEX IF NOT EXISTS change_log_by_zone ON groupstore.change_log (zone, tx, seq);
            CREATE INDEX IF NOT EXISTS change_log_by_record ON groupstore.change_log (zone, type, name, tx, seq);
            CREATE TABLE IF NOT EXISTS groupstore.tombstones (
              zone text NOT NULL,
              type text NOT NULL,
              name text NOT NULL,
              owner text NOT NULL,
              tag bigint NOT NULL,
              PRIMARY KEY (zone, type, name)
            );
            CREATE TABLE IF NOT EXISTS groupstore.assets (
              hash text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
              size bigint NOT NULL,
              bytes bytea NOT NULL,
              owner text NOT NULL DEFAULT current_user,
              CHECK (octet_length(bytes) = size AND encode(sha256(bytes), 'hex') = hash),
              PRIMARY KEY (hash, owner)
            );
            -- Format 2: each role that uploads an asset holds its own copy (format 1 kept
            -- one per hash, which let a role name a hash it could not read and so read it).
            DO $do$ BEGIN
              IF (SELECT cardinality(conkey) FROM pg_constraint WHERE conname = 'assets_pkey' AND conrelid = 'groupstore.assets'::regclass) = 1 THEN
                ALTER TABLE groupstore.assets DROP CONSTRAINT assets_pkey;
                ALTER TABLE groupstore.assets ADD PRIMARY KEY (hash, owner);
              END IF;
            END $do$;
            CREATE TABLE IF NOT EXISTS groupstore.asset_refs (
              zone text NOT NULL,
              type text NOT NULL,
              name text NOT NULL,
              hash text NOT NULL,
              PRIMARY KEY (zone, type, name, hash)
            );
            CREATE INDEX IF NOT EXISTS asset_refs_by_hash ON groupstore.asset_refs (hash, zone);
            CREATE TABLE IF NOT EXISTS groupstore.shares (
              owner text NOT NULL DEFAULT current_user,
              zone text NOT NULL CHECK (zone ~ '^[A-Za-z0-9._-]{1,63}$'),
              member text NOT NULL,
              can_write boolean NOT NULL,
              PRIMARY KEY (owner, zone, member)
            );
            CREATE INDEX IF NOT EXISTS shares_by_member ON groupstore.shares (member, owner, zone);

            -- The owner of a shared zone 'shared/<owner>/<name>' (NULL for any other zone).
            CREATE OR REPLACE FUNCTION groupstore.zone_owner(p_zone text) RETURNS text
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            RETURN substring(p_zone FROM '^shared/(.+)/[A-Za-z0-9._-]{1,63}$');
            -- Whether the current role reads a zone: the public zone, its own
            -- private zone, its shared zones and those shared with it. (Not
            -- inlined, for its EXISTS: policies test the public and private
            -- zones first, and call it for shared zones only.)
            CREATE OR REPLACE FUNCTION groupstore.may_read(p_zone text) RETURNS boolean
            LANGUAGE sql STABLE PARALLEL SAFE
            RETURN p_zone = 'public' OR p_zone = 'private/' || current_user
              OR groupstore.zone_owner(p_zone) = current_user
              OR EXISTS (SELECT 1 FROM groupstore.shares AS s
                         WHERE s.member = current_user AND p_zone = 'shared/' || s.owner || '/' || s.zone);
            -- The assets a row names: asset values ({"a": {"h": hash, …}}) in its
            -- jsonb columns (`p_columns`: the row as jsonb, when the table has any)
            -- and in the values kept aside (`p_extra`).
            CREATE OR REPLACE FUNCTION groupstore.asset_hashes(p_columns jsonb, p_extra jsonb) RETURNS SETOF text
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
              SELECT DISTINCT x.h FROM (
                SELECT v.value -> 'a' ->> 'h' AS h FROM jsonb_each(CASE WHEN jsonb_typeof(p_columns) = 'object' THEN p_columns ELSE '{}' END) AS v
                  WHERE v.key <> 'gs_extra' AND jsonb_typeof(v.value) = 'object'
                UNION ALL
                SELECT v.value -> 'a' ->> 'h' FROM jsonb_each(CASE WHEN jsonb_typeof(p_extra) = 'object' THEN p_extra ELSE '{}' END) AS v
                  WHERE jsonb_typeof(v.value) = 'object'
              ) AS x WHERE x.h IS NOT NULL
            $fn$;
            -- Whether the current role writes in a shared zone: its own, or one
            -- shared with it read-write.
            CREATE OR REPLACE FUNCTION groupstore.may_write(p_zone text) RETURNS boolean
            LANGUAGE sql STABLE PARALLEL SAFE
            RETURN groupstore.zone_owner(p_zone) = current_user
              OR EXISTS (SELECT 1 FROM groupstore.shares AS s
                         WHERE s.member = current_user AND s.can_write AND p_zone = 'shared/' || s.owner || '/' || s.zone);

            ALTER TABLE groupstore.meta ENABLE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.meta FORCE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.types ENABLE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.types FORCE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.change_log ENABLE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.change_log FORCE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.tombstones ENABLE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.tombstones FORCE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.assets ENABLE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.assets FORCE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.asset_refs ENABLE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.asset_refs FORCE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.shares ENABLE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.shares FORCE ROW LEVEL SECURITY;

            DROP POLICY IF EXISTS gs_admin ON groupstore.meta;
            CREATE POLICY gs_admin ON groupstore.meta TO CURRENT_USER USING (true) WITH CHECK (true);
            DROP POLICY IF EXISTS gs_read ON groupstore.meta;
            CREATE POLICY gs_read ON groupstore.meta FOR SELECT TO groupstore_user USING (true);
            DROP POLICY IF EXISTS gs_admin ON groupstore.types;
            CREATE POLICY gs_admin ON groupstore.types TO CURRENT_USER USING (true) WITH CHECK (true);
            DROP POLICY IF EXISTS gs_read ON groupstore.types;
            CREATE POLICY gs_read ON groupstore.types FOR SELECT TO groupstore_user USING (true);
            DROP POLICY IF EXISTS gs_admin ON groupstore.change_log;
            CREATE POLICY gs_admin ON groupstore.change_log TO CURRENT_USER USING (true) WITH CHECK (true);
            DROP POLICY IF EXISTS gs_read ON groupstore.change_log;
            CREATE POLICY gs_read ON groupstore.change_log FOR SELECT TO groupstore_user
              USING (zone = 'public' OR zone = 'private/' || current_user OR (zone LIKE 'shared/%' AND groupstore.may_read(zone)));
            DROP POLICY IF EXISTS gs_admin ON groupstore.tombstones;
            CREATE POLICY gs_admin ON groupstore.tombstones TO CURRENT_USER USING (true) WITH CHECK (true);
            DROP POLICY IF EXISTS gs_read ON groupstore.tombstones;
            CREATE POLICY gs_read ON groupstore.tombstones FOR SELECT TO groupstore_user
              USING (zone = 'public' OR zone = 'private/' || current_user OR (zone LIKE 'shared/%' AND groupstore.may_read(zone)));
            DROP POLICY IF EXISTS gs_admin ON groupstore.assets;
            CREATE POLICY gs_admin ON groupstore.assets TO CURRENT_USER USING (true) WITH CHECK (true);
            DROP POLICY IF EXISTS gs_admin ON groupstore.asset_refs;
            CREATE POLICY gs_admin ON groupstore.asset_refs TO CURRENT_USER USING (true) WITH CHECK (true);
            DROP POLICY IF EXISTS gs_read ON groupstore.asset_refs;
            CREATE POLICY gs_read ON groupstore.asset_refs FOR SELECT TO groupstore_user
              USING (zone = 'public' OR zone = 'private/' || current_user OR (zone LIKE 'shared/%' AND groupstore.may_read(zone)));
            -- An asset is read by who uploaded it, and by who can see a record naming it.
            DROP POLICY IF EXISTS gs_read ON groupstore.assets;
            CREATE POLICY gs_read ON groupstore.assets FOR SELECT TO groupstore_user
              USING (owner = current_user OR EXISTS (SELECT 1 FROM groupstore.asset_refs AS r WHERE r.hash = assets.hash));
            DROP POLICY IF EXISTS gs_add ON groupstore.assets;
            CREATE POLICY gs_add ON groupstore.assets FOR INSERT TO groupstore_user WITH CHECK (owner = current_user);

            DROP POLICY IF EXISTS gs_admin ON groupstore.shares;
            CREATE POLICY gs_admin ON groupstore.shares TO CURRENT_USER USING (true) WITH CHECK (true);
            DROP POLICY IF EXISTS gs_owner ON groupstore.shares;
            CREATE POLICY gs_owner ON groupstore.shares TO groupstore_user USING (owner = current_user) WITH CHECK (owner = current_user);
            DROP POLICY IF EXISTS gs_member ON groupstore.shares;
            CREATE POLICY gs_member ON groupstore.shares FOR SELECT TO groupstore_user USING (member = current_user);

            GRANT SELECT, INSERT, UPDATE, DELETE ON groupstore.shares TO groupstore_user;
            GRANT SELECT ON groupstore.meta, groupstore.types, groupstore.change_log, groupstore.tombstones, groupstore.asset_refs TO groupstore_user;
            GRANT SELECT, INSERT ON groupstore.assets TO groupstore_user;
            GRANT USAGE, SELECT ON SEQUENCE groupstore.tags TO groupstore_user;
            GRANT SELECT ON SEQUENCE groupstore.change_log_seq_seq TO groupstore_user;

            -- Before a row is written (the writer's rights): owner, zone and name
            -- from the writing role and the key; tag, transaction, edit time.
            CREATE OR REPLACE FUNCTION groupstore.row_before() RETURNS trigger
            LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_type record;
              v_new jsonb := to_jsonb(NEW);
              v_old jsonb;
              v_parts text[] := '{}';
              v_part text;
              v_key text;
              v_extra jsonb;
              i int;
            BEGIN
              -- The record type, as its trigger was created with it (scope, key columns, which are bytea).
              IF TG_NARGS <> 4 THEN
                RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('table %s: its GroupStore trigger is out of date; run groupstore cloud setup', TG_TABLE_NAME);
              END IF;
              SELECT TG_ARGV[0] AS scope, TG_ARGV[1]::text[] AS key_columns, TG_ARGV[2]::boolean[] AS key_bytea INTO v_type;
              IF TG_OP = 'INSERT' THEN
                NEW.gs_owner := current_user;
                IF v_type.scope = 'shared' THEN
                  -- A shared table holds the rows of many shared zones: the row names its own.
                  IF NEW.gs_zone IS NULL OR groupstore.zone_owner(NEW.gs_zone) IS NULL THEN
                    RAISE EXCEPTION USING ERRCODE = '23502',
                      MESSAGE = format('%s is a shared table: give each row its zone, gs_zone = ''shared/<owner>/<zone name>''', TG_TABLE_NAME);
                  END IF;
                ELSE
                  NEW.gs_zone := CASE v_type.scope WHEN 'public' THEN 'public' ELSE 'private/' || current_user END;
                END IF;
                -- The record name comes from the key columns; one given must
                -- agree with them (it is given alone only when a key part did
                -- not fit its column and is kept aside).
                FOR i IN 1 .. cardinality(v_type.key_columns) LOOP
                  v_part := v_new ->> v_type.key_columns[i];
                  EXIT WHEN v_part IS NULL OR v_part = '';
                  IF v_type.key_bytea[i] THEN v_part := 'hex:' || upper(substr(v_part, 3)); END IF;
                  v_parts := v_parts || v_part;
                END LOOP;
                IF cardinality(v_parts) = cardinality(v_type.key_columns) THEN
                  IF cardinality(v_parts) = 1 THEN
                    v_part := v_parts[1];
                  ELSE
                    SELECT '[' || string_agg(to_json(p)::text, ',' ORDER BY o) || ']' INTO v_part
                      FROM unnest(v_parts) WITH ORDINALITY AS u(p, o);
                  END IF;
                  IF NEW.gs_name IS NOT NULL AND NEW.gs_name <> v_part THEN
                    RAISE EXCEPTION USING ERRCODE = '23514',
                      MESSAGE = format('%s: gs_name %s does not name the key %s', TG_TABLE_NAME, NEW.gs_name, v_part);
                  END IF;
                  NEW.gs_name := v_part;
                ELSIF NEW.gs_name IS NULL OR NEW.gs_extra IS NULL OR NOT (NEW.gs_extra ?| v_type.key_columns) THEN
                  RAISE EXCEPTION USING ERRCODE = '23502', MESSAGE = format('%s: a synced row needs its key (%s)', TG_TABLE_NAME, array_to_string(v_type.key_columns, ', '));
                END IF;
                NEW.gs_edited_at := LEAST(COALESCE(NEW.gs_edited_at, clock_timestamp()), clock_timestamp());
                NEW.gs_extra := COALESCE(NEW.gs_extra, '{}');
              ELSE
                v_old := to_jsonb(OLD);
                FOREACH v_key IN ARRAY v_type.key_columns LOOP
                  IF v_new -> v_key IS DISTINCT FROM v_old -> v_key THEN
                    RAISE EXCEPTION USING ERRCODE = '23514',
                      MESSAGE = format('%s: the key of a synced row cannot change; delete the row and insert another', TG_TABLE_NAME);
                  END IF;
                END LOOP;
                NEW.gs_owner := OLD.gs_owner;
                NEW.gs_zone := OLD.gs_zone;
                NEW.gs_name := OLD.gs_name;
                IF NEW.gs_edited_at IS NOT DISTINCT FROM OLD.gs_edited_at THEN
                  NEW.gs_edited_at := GREATEST(clock_timestamp(), OLD.gs_edited_at + interval '1 millisecond');
                ELSE
                  NEW.gs_edited_at := LEAST(NEW.gs_edited_at, clock_timestamp());
                END IF;
                -- A value kept aside (it did not fit its column) is dropped when
                -- the statement changed the column and not the value kept aside.
                SELECT COALESCE(jsonb_object_agg(e.key, e.value), '{}') INTO v_extra
                  FROM jsonb_each(COALESCE(NEW.gs_extra, '{}')) AS e
                  WHERE v_new -> e.key IS NOT DISTINCT FROM v_old -> e.key
                     OR e.value IS DISTINCT FROM (v_old -> 'gs_extra' -> e.key);
                NEW.gs_extra := v_extra;
              END IF;
              -- An asset a row names must be one this role uploaded or may read
              -- (naming a hash must not be a way to read its bytes).
              IF NEW.gs_extra <> '{}' OR TG_ARGV[3] = 'true' THEN
                SELECT x.h INTO v_part FROM groupstore.asset_hashes(CASE WHEN TG_ARGV[3] = 'true' THEN v_new END, NEW.gs_extra) AS x(h)
                  WHERE NOT EXISTS (SELECT 1 FROM groupstore.assets AS a WHERE a.hash = x.h) LIMIT 1;
                IF FOUND THEN
                  RAISE EXCEPTION USING ERRCODE = '42501',
                    MESSAGE = format('%s: asset %s is neither one this role uploaded nor one it may read; upload its bytes first', TG_TABLE_NAME, v_part);
                END IF;
              END IF;
              NEW.gs_tag := nextval('groupstore.tags');
              NEW.gs_tx := pg_current_xact_id();
              NEW.gs_edited_by := current_user;
              RETURN NEW;
            END $fn$;

            -- After each statement (the schema owner's rights), on all its rows
            -- at once: the change log, tombstones and asset references, which
            -- users only read; then a hint for listeners, with the writer's origin.
            -- (Joins by key: sequential scans off, whatever the statistics, and so
            -- JIT off, which such costs would start; the typed tables' names are
            -- compared in the system tables' collation.)
            CREATE OR REPLACE FUNCTION groupstore.rows_written() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $fn$
            BEGIN
              IF TG_OP = 'INSERT' THEN
                IF NOT EXISTS (SELECT 1 FROM gs_new) THEN RETURN NULL; END IF;
                INSERT INTO groupstore.change_log (zone, type, name) SELECT gs_zone, TG_TABLE_NAME, gs_name FROM gs_new ORDER BY gs_tag;
                DELETE FROM groupstore.tombstones AS t USING gs_new AS n
                  WHERE t.zone = n.gs_zone COLLATE "default" AND t.type = TG_TABLE_NAME::text AND t.name = n.gs_name COLLATE "default";
              ELSIF TG_OP = 'UPDATE' THEN
                IF NOT EXISTS (SELECT 1 FROM gs_new) THEN RETURN NULL; END IF;
                INSERT INTO groupstore.change_log (zone, type, name) SELECT gs_zone, TG_TABLE_NAME, gs_name FROM gs_new ORDER BY gs_tag;
                DELETE FROM groupstore.asset_refs AS r USING gs_old AS o
                  WHERE (o.gs_extra <> '{}' OR TG_ARGV[0] = 'true') AND r.zone = o.gs_zone COLLATE "default" AND r.type = TG_TABLE_NAME::text AND r.name = o.gs_name COLLATE "default";
              ELSE
                IF NOT EXISTS (SELECT 1 FROM gs_old) THEN RETURN NULL; END IF;
                INSERT INTO groupstore.change_log (zone, type, name) SELECT gs_zone, TG_TABLE_NAME, gs_name FROM gs_old ORDER BY gs_tag;
                INSERT INTO groupstore.tombstones (zone, type, name, owner, tag)
                  SELECT gs_zone, TG_TABLE_NAME, gs_name, gs_owner, nextval('groupstore.tags') FROM gs_old ORDER BY gs_tag
                  ON CONFLICT (zone, type, name) DO UPDATE SET owner = excluded.owner, tag = excluded.tag;
                DELETE FROM groupstore.asset_refs AS r USING gs_old AS o
                  WHERE (o.gs_extra <> '{}' OR TG_ARGV[0] = 'true') AND r.zone = o.gs_zone COLLATE "default" AND r.type = TG_TABLE_NAME::text AND r.name = o.gs_name COLLATE "default";
              END IF;
              -- TG_ARGV[0]: whether the table has jsonb columns, which may hold assets too.
              IF TG_OP <> 'DELETE' THEN
                INSERT INTO groupstore.asset_refs (zone, type, name, hash)
                  SELECT DISTINCT n.gs_zone, TG_TABLE_NAME, n.gs_name, h.h
                  FROM gs_new AS n, groupstore.asset_hashes(CASE WHEN TG_ARGV[0] = 'true' THEN to_jsonb(n) END, n.gs_extra) AS h(h)
                  WHERE n.gs_extra <> '{}' OR TG_ARGV[0] = 'true';
              END IF;
              PERFORM pg_notify('groupstore', coalesce(current_setting('groupstore.origin', true), ''));
              RETURN NULL;
            END $fn$;

            -- After each statement: a hint for listeners, whose payload is the writer's
            -- origin (set by a GroupStore remote in its transactions; empty for others).
            CREATE OR REPLACE FUNCTION groupstore.statement_after() RETURNS trigger
            LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
            BEGIN
              PERFORM pg_notify('groupstore', coalesce(current_setting('groupstore.origin', true), ''));
              RETURN NULL;
            END $fn$;

            -- Format 3: a page of the change feed of a zone after (tx, seq), as the calling
            -- role (row-level security applies). The first row is a header: the log's horizon
            -- (tx, seq), its head (the last seq issued), and whether entries after the
            -- position are held back by the fence; then the entries behind the fence, each
            -- record at its last entry there only, in (tx, seq) order. A function so that its
            -- plans are made once a session (generic: planning each call cost 0.5 ms, four
            -- times the work); every statement in it reads by key.
            -- Dropped first: a function whose result columns changed cannot be replaced.
            DROP FUNCTION IF EXISTS groupstore.feed(text, xid8, bigint, bigint);
            CREATE FUNCTION groupstore.feed(p_zone text, p_tx xid8, p_seq bigint, p_limit bigint)
            RETURNS TABLE (o_tx text, o_seq text, o_type text, o_name text)
            LANGUAGE plpgsql STABLE
            SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $fn$
            DECLARE
              v_fence xid8 := pg_snapshot_xmin(pg_current_snapshot());
            BEGIN
              RETURN QUERY SELECT
                (SELECT m.value FROM groupstore.meta AS m WHERE m.key = 'horizon_tx'),
                (SELECT m.value FROM groupstore.meta AS m WHERE m.key = 'horizon_seq'),
                (SELECT s.last_value FROM groupstore.change_log_seq_seq AS s)::text,
                EXISTS (SELECT 1 FROM groupstore.change_log AS c WHERE c.zone = p_zone AND (c.tx, c.seq) > (p_tx, p_seq) AND c.tx >= v_fence)::text;
              RETURN QUERY SELECT l.tx::text, l.seq::text, l.type, l.name FROM groupstore.change_log AS l
                WHERE l.zone = p_zone AND (l.tx, l.seq) > (p_tx, p_seq) AND l.tx < v_fence
                  AND NOT EXISTS (
                    SELECT 1 FROM groupstore.change_log AS later
                    WHERE later.zone = l.zone AND later.type = l.type AND later.name = l.name
                      AND (later.tx, later.seq) > (l.tx, l.seq) AND later.tx < v_fence)
                ORDER BY l.tx, l.seq LIMIT p_limit;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.feed(text, xid8, bigint, bigint) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION groupstore.feed(text, xid8, bigint, bigint) TO groupstore_user;

            -- (Re)creates the triggers of a typed table: the row trigger, given
            -- the record type (so it reads no catalog per row), and one statement
            -- trigger per operation, given the statement's rows.
            CREATE OR REPLACE FUNCTION groupstore.install_triggers(p_name text) RETURNS void
            LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_type record;
              v_table text := format('public.%I', p_name);
              v_jsonb boolean;
            BEGIN
              SELECT scope, key_columns, key_bytea INTO v_type FROM groupstore.types WHERE name = p_name;
              IF NOT FOUND OR to_regclass(v_table) IS NULL THEN RETURN; END IF;
              EXECUTE format('DROP TRIGGER IF EXISTS gs_before ON %s', v_table);
              EXECUTE format('DROP TRIGGER IF EXISTS gs_after ON %s', v_table);
              EXECUTE format('DROP TRIGGER IF EXISTS gs_notify ON %s', v_table);
              EXECUTE format('DROP TRIGGER IF EXISTS gs_inserted ON %s', v_table);
              EXECUTE format('DROP TRIGGER IF EXISTS gs_updated ON %s', v_table);
              EXECUTE format('DROP TRIGGER IF EXISTS gs_deleted ON %s', v_table);
              -- Columns may be added later (prepare_type reinstalls the triggers then).
              v_jsonb := EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = v_table::regclass AND atttypid = 'jsonb'::regtype
                                   AND attname <> 'gs_extra' AND attnum > 0 AND NOT attisdropped);
              EXECUTE format('CREATE TRIGGER gs_before BEFORE INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION groupstore.row_before(%L, %L, %L, %L)',
                v_table, v_type.scope, v_type.key_columns::text, v_type.key_bytea::text, v_jsonb::text);
              EXECUTE format('CREATE TRIGGER gs_inserted AFTER INSERT ON %s REFERENCING NEW TABLE AS gs_new FOR EACH STATEMENT EXECUTE FUNCTION groupstore.rows_written(%L)', v_table, v_jsonb::text);
              EXECUTE format('CREATE TRIGGER gs_updated AFTER UPDATE ON %s REFERENCING OLD TABLE AS gs_old NEW TABLE AS gs_new FOR EACH STATEMENT EXECUTE FUNCTION groupstore.rows_written(%L)', v_table, v_jsonb::text);
              EXECUTE format('CREATE TRIGGER gs_deleted AFTER DELETE ON %s REFERENCING OLD TABLE AS gs_old FOR EACH STATEMENT EXECUTE FUNCTION groupstore.rows_written(%L)', v_table, v_jsonb::text);
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.install_triggers(text) FROM PUBLIC;

            -- After each statement on the shares: a hint, so that members fetch
            -- (or leave) a zone shared with them (or no longer).
            DROP TRIGGER IF EXISTS gs_notify ON groupstore.shares;
            CREATE TRIGGER gs_notify AFTER INSERT OR UPDATE OR DELETE ON groupstore.shares
              FOR EACH STATEMENT EXECUTE FUNCTION groupstore.statement_after();

            -- Declares a record type: creates its typed table (the schema owner's
            -- rights, never the user's: a user must not own, and so escape, the
            -- row-level security of a table others write too), adds new columns.
            CREATE OR REPLACE FUNCTION groupstore.prepare_type(p_name text, p_scope text, p_columns jsonb) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_existing text;
              v_col jsonb;
              v_type text;
              v_keys text[] := '{}';
              v_key_bytea boolean[] := '{}';
              v_table text := format('public.%I', p_name);
            BEGIN
              IF p_scope IS NULL OR p_scope NOT IN ('private', 'public', 'shared') THEN
                RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('scope %s is not private, public or shared', p_scope);
              END IF;
              IF p_name IS NULL OR p_name = '' OR octet_length(p_name) > 63 THEN
                RAISE EXCEPTION USING ERRCODE = 'GS002',
                  MESSAGE = format('table %s: PostgreSQL names hold 1 to 63 bytes, this one has %s', p_name, octet_length(p_name));
              END IF;
              FOR v_col IN SELECT value FROM jsonb_array_elements(p_columns) LOOP
                v_type := v_col ->> 'pgType';
                IF v_type IS NULL OR v_type NOT IN ('text', 'bigint', 'double precision', 'boolean', 'timestamp(3) without time zone', 'bytea', 'jsonb') THEN
                  RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('%s.%s: column type %s is not one GroupStore maps to', p_name, v_col ->> 'name', v_type);
                END IF;
                IF v_col ->> 'name' IS NULL OR lower(v_col ->> 'name') LIKE 'gs\_%' OR octet_length(v_col ->> 'name') > 63 THEN
                  RAISE EXCEPTION USING ERRCODE = 'GS002',
                    MESSAGE = format('table %s: column %s is reserved (gs_) or longer than the 63 bytes PostgreSQL names hold', p_name, v_col ->> 'name');
                END IF;
                IF (v_col ->> 'isKey')::boolean THEN
                  v_keys := v_keys || (v_col ->> 'name');
                  v_key_bytea := v_key_bytea || (v_type = 'bytea');
                END IF;
              END LOOP;
              PERFORM pg_advisory_xact_lock(hashtext('groupstore.prepare_type'));
              SELECT scope INTO v_existing FROM groupstore.types WHERE name = p_name;
              IF v_existing IS NOT NULL AND v_existing <> p_scope THEN
                RAISE EXCEPTION USING ERRCODE = 'GS001',
                  MESSAGE = format('record type %s is synced as %s; it cannot be synced as %s', p_name, v_existing, p_scope);
              END IF;
              IF v_existing IS NULL THEN
                IF to_regclass(v_table) IS NOT NULL THEN
                  RAISE EXCEPTION USING ERRCODE = 'GS002',
                    MESSAGE = format('table %s exists on the server and is not a GroupStore record type', v_table);
                END IF;
                IF cardinality(v_keys) = 0 THEN
                  RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('record type %s has no key column', p_name);
                END IF;
                EXECUTE format('CREATE TABLE %s (gs_zone text COLLATE "C" NOT NULL, gs_name text COLLATE "C" NOT NULL, gs_owner text NOT NULL, '
                  'gs_tag bigint NOT NULL, gs_tx xid8 NOT NULL, gs_edited_at timestamptz NOT NULL, gs_edited_by text NOT NULL, '
                  'gs_extra jsonb NOT NULL DEFAULT ''{}'', PRIMARY KEY (gs_zone, gs_name))', v_table);
                EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', v_table);
                EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', v_table);
                EXECUTE format('CREATE POLICY gs_admin ON %s TO %I USING (true) WITH CHECK (true)', v_table, current_user);
                IF p_scope = 'private' THEN
                  EXECUTE format('CREATE POLICY gs_owner ON %s TO groupstore_user USING (gs_owner = current_user) WITH CHECK (gs_owner = current_user)', v_table);
                ELSIF p_scope = 'shared' THEN
                  EXECUTE format('CREATE POLICY gs_read ON %s FOR SELECT TO groupstore_user USING (groupstore.may_read(gs_zone))', v_table);
                  EXECUTE format('CREATE POLICY gs_insert ON %s FOR INSERT TO groupstore_user WITH CHECK (gs_owner = current_user AND groupstore.may_write(gs_zone))', v_table);
                  EXECUTE format('CREATE POLICY gs_update ON %s FOR UPDATE TO groupstore_user USING (groupstore.may_write(gs_zone)) WITH CHECK (groupstore.may_write(gs_zone))', v_table);
                  EXECUTE format('CREATE POLICY gs_delete ON %s FOR DELETE TO groupstore_user USING (groupstore.may_write(gs_zone))', v_table);
                ELSE
                  EXECUTE format('CREATE POLICY gs_read ON %s FOR SELECT TO groupstore_user USING (true)', v_table);
                  EXECUTE format('CREATE POLICY gs_insert ON %s FOR INSERT TO groupstore_user WITH CHECK (gs_owner = current_user)', v_table);
                  EXECUTE format('CREATE POLICY gs_update ON %s FOR UPDATE TO groupstore_user USING (gs_owner = current_user) WITH CHECK (gs_owner = current_user)', v_table);
                  EXECUTE format('CREATE POLICY gs_delete ON %s FOR DELETE TO groupstore_user USING (gs_owner = current_user)', v_table);
                END IF;
                EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO groupstore_user', v_table);
                INSERT INTO groupstore.types (name, scope, columns, key_columns, key_bytea) VALUES (p_name, p_scope, p_columns, v_keys, v_key_bytea);
                PERFORM groupstore.install_triggers(p_name);
              END IF;
              FOR v_col IN SELECT value FROM jsonb_array_elements(p_columns) LOOP
                IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = v_table::regclass AND attname = v_col ->> 'name' AND NOT attisdropped) THEN
                  EXECUTE format('ALTER TABLE %s ADD COLUMN %I %s', v_table, v_col ->> 'name', v_col ->> 'pgType');
                  IF v_col ->> 'pgType' = 'jsonb' THEN PERFORM groupstore.install_triggers(p_name); END IF;
                END IF;
              END LOOP;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.prepare_type(text, text, jsonb) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION groupstore.prepare_type(text, text, jsonb) TO groupstore_user;

            -- The typed tables of an older setup get this setup's triggers.
            DO $do$ DECLARE v_name text; BEGIN
              FOR v_name IN SELECT name FROM groupstore.types LOOP PERFORM groupstore.install_triggers(v_name); END LOOP;
            END $do$;
            DROP FUNCTION IF EXISTS groupstore.row_after();

            -- Prunes the change log to its last `p_keep_last` entries (those
            -- behind the transaction fence), and the tombstones of the deletes
            -- pruned with it; tokens from before the cut expire. Run by the
            -- schema's owner.
            CREATE OR REPLACE FUNCTION groupstore.compact_log(p_keep_last bigint) RETURNS bigint
            LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_cut record;
              v_count bigint;
              v_tag bigint;
            BEGIN
              SELECT tx, seq INTO v_cut FROM groupstore.change_log
                WHERE tx < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY tx DESC, seq DESC OFFSET greatest(p_keep_last, 0) LIMIT 1;
              IF NOT FOUND THEN RETURN 0; END IF;
              DELETE FROM groupstore.change_log WHERE (tx, seq) <= (v_cut.tx, v_cut.seq);
              GET DIAGNOSTICS v_count = ROW_COUNT;
              WITH gone AS (
                DELETE FROM groupstore.tombstones AS t WHERE NOT EXISTS (
                  SELECT 1 FROM groupstore.change_log AS l WHERE l.zone = t.zone AND l.type = t.type AND l.name = t.name)
                RETURNING t.tag)
              SELECT max(tag) INTO v_tag FROM gone;
              UPDATE groupstore.meta SET value = v_cut.tx::text WHERE key = 'horizon_tx';
              UPDATE groupstore.meta SET value = v_cut.seq::text WHERE key = 'horizon_seq';
              UPDATE groupstore.meta SET value = greatest(value::bigint, coalesce(v_tag, 0))::text WHERE key = 'horizon_tag';
              RETURN v_count;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.compact_log(bigint) FROM PUBLIC;
            """#
    }
#endif  // Postgres
