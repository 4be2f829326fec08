#if Postgres
    extension PostgresServerSchema {
        /// Format 4, after the attack on the bridge (issue 30):
        /// `groupstore.history(seq)`, which tells a bridge whether the change it
        /// saw last is still part of the server's history (a database set up
        /// again has another epoch; one restored from a dump lacks the changes
        /// made since, or logs others at their positions); a row trigger that
        /// names text keys as the bridge does (a key `hex:41` written with
        /// `psql` stays text) and refuses rows written as `groupstore_user`;
        /// `prepare_type` matching a table's name ignoring case, as SQLite does,
        /// and adding columns to a type only for its creator or the schema's
        /// owner (`groupstore.types.creator`).
        static let formatFour = #"""
            -- The epoch, the latest change of the log (its seq and transaction), the
            -- transaction of the change at p_seq (NULL when none), the pruned horizon
            -- and the server's clock. Every change is looked at, whoever's zone it is in
            -- (the schema owner's rights): the answer names no zone, type or row.
            CREATE OR REPLACE FUNCTION groupstore.history(p_seq bigint)
            RETURNS TABLE (o_epoch text, o_head text, o_head_tx text, o_tx text, o_horizon text, o_now text)
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
              SELECT (SELECT m.value FROM groupstore.meta AS m WHERE m.key = 'epoch'),
                coalesce(h.seq, 0)::text, coalesce(h.tx::text, ''),
                (SELECT c.tx::text FROM groupstore.change_log AS c WHERE c.seq = p_seq),
                (SELECT m.value FROM groupstore.meta AS m WHERE m.key = 'horizon_seq'),
                extract(epoch FROM clock_timestamp())::text
              FROM (SELECT 1) AS one
              LEFT JOIN LATERAL (SELECT c.seq, c.tx FROM groupstore.change_log AS c ORDER BY c.seq DESC LIMIT 1) AS h ON true
            $fn$;
            REVOKE ALL ON FUNCTION groupstore.history(bigint) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION groupstore.history(bigint) TO groupstore_user;
            -- Format 4 (keys named as the bridge names them; groupstore_user writes nothing).
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
              -- Format 4: the role every user is granted is nobody: it never owns or edits a row.
              IF current_user = 'groupstore_user' THEN
                RAISE EXCEPTION USING ERRCODE = '42501',
                  MESSAGE = format('%s: groupstore_user is the role users are granted, not a user: write as your own role (RESET ROLE)', TG_TABLE_NAME);
              END IF;
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
                  EXIT WHEN v_part IS NULL;
                  -- Named as the bridge names keys: a blob 'hex:' and its bytes; text that is
                  -- empty or starts with 'hex:' or 'txt:', 'txt:' and its bytes; other text as it is.
                  IF v_type.key_bytea[i] THEN
                    v_part := 'hex:' || upper(substr(v_part, 3));
                  ELSIF v_part = '' OR v_part LIKE 'hex:%' OR v_part LIKE 'txt:%' THEN
                    v_part := 'txt:' || upper(encode(convert_to(v_part, 'UTF8'), 'hex'));
                  END IF;
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

            -- Format 4: who created each record type (NULL: the schema's owner, or a type
            -- made before format 4).
            ALTER TABLE groupstore.types ADD COLUMN IF NOT EXISTS creator text;

            -- Format 4 (a name matched ignoring case; columns added by the type's creator or the
            -- schema's owner only). Declares a record type: creates its typed table (the schema owner's
            -- rights, never the user's: a user must not own, and so escape, the
            -- row-level security of a table others write too), adds new columns.
            CREATE OR REPLACE FUNCTION groupstore.prepare_type(p_name text, p_scope text, p_columns jsonb) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_existing text;
              v_known text;
              v_creator text;
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
              -- Format 4: table names are matched as SQLite matches them (ignoring case): a
              -- type prepared as Memo and as memo is one type, under its first spelling.
              SELECT name, scope, creator INTO v_known, v_existing, v_creator FROM groupstore.types
                WHERE lower(name) = lower(p_name) ORDER BY name = p_name DESC LIMIT 1;
              IF v_known IS NOT NULL THEN
                p_name := v_known;
                v_table := format('public.%I', p_name);
              END IF;
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
                -- Its creator: the role logged in, but for the schema's owner (NULL).
                INSERT INTO groupstore.types (name, scope, columns, key_columns, key_bytea, creator)
                  VALUES (p_name, p_scope, p_columns, v_keys, v_key_bytea, CASE WHEN session_user = current_user THEN NULL ELSE session_user END);
                v_creator := CASE WHEN session_user = current_user THEN NULL ELSE session_user END;
                PERFORM groupstore.install_triggers(p_name);
              END IF;
              -- Format 4: only the type's creator, or the schema's owner, adds columns to it; another
              -- user's values of columns it lacks are kept in gs_extra (carried, not lost).
              IF session_user <> current_user AND v_creator IS DISTINCT FROM session_user THEN RETURN; END IF;
              FOR v_col IN SELECT value FROM jsonb_array_elements(p_columns) LOOP
                IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = v_table::regclass AND attname = v_col ->> 'name' AND NOT attisdropped) THEN
                  EXECUTE format('ALTER TABLE %s ADD COLUMN %I %s', v_table, v_col ->> 'name', v_col ->> 'pgType');
                  IF v_col ->> 'pgType' = 'jsonb' THEN PERFORM groupstore.install_triggers(p_name); END IF;
                END IF;
              END LOOP;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.prepare_type(text, text, jsonb) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION groupstore.prepare_type(text, text, jsonb) TO groupstore_user;

            UPDATE groupstore.meta SET value = '4' WHERE key = 'format';
            """#
    }
#endif  // Postgres
