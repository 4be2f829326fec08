#if Postgres
    extension PostgresServerSchema {
        /// The fleet's role: one role every device acts as through a gateway
        /// (it cannot log in), each device told apart by the `groupstore.device`
        /// setting the gateway gives each of its transactions from the verified
        /// token's `sub` (see `groupstore.user_name()` in ``fleet``).
        static let deviceRole = "groupstore_device"
        /// The prefix of a device's user name (`device+<sub>`): a role named
        /// so is nobody (`groupstore.user_name()` is `NULL` for it), so a
        /// device is never taken for a role, or a role for a device.
        static let devicePrefix = "device+"
        /// The transaction-local setting naming the device (its `sub`).
        static let deviceSetting = "groupstore.device"

        /// Migration `groupstore.postgres.fleet` (format 9): who a user is
        /// comes from `groupstore.user_name()` wherever it came from
        /// `current_user`: the role, as before; for the fleet's role,
        /// `groupstore_device`, the device its gateway named (`device+<sub>`),
        /// or `NULL` (nothing matches it, and it writes nothing) when none was.
        /// Only a session that may become `groupstore_device` (the gateway's
        /// login role, granted it) acts as a device, and any other role's
        /// `groupstore.device` setting is ignored, so no session can pass for a
        /// device, and no device for another: a device's token names its `sub`,
        /// and the gateway sets it.
        ///
        /// - `may_read`, `may_write`, the policies of the schema's tables and
        ///   of every typed table (`groupstore.install_policies`, which
        ///   `install_triggers` now runs too, so a table is created with them),
        ///   the owner of a new share or asset, and `row_before` (as in `v4`)
        ///   read `groupstore.user_name()`.
        /// - `prepare_type` (as in `history-guard`): a record type a device
        ///   creates is the schema owner's (only the owner adds columns to
        ///   it), since every device acts as the one role.
        /// - `groupstore.hosts`: what each host of each user last reported of
        ///   itself (``GroupStoreCloud/CloudHostReport``), written by the user
        ///   (its own rows only), read whole by the schema's owner
        ///   (`groupstore cloud fleet`).
        static let fleet = #"""
            DO $do$ BEGIN
              IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'groupstore_device') THEN
                CREATE ROLE groupstore_device NOLOGIN;
              END IF;
            END $do$;
            GRANT groupstore_user TO groupstore_device;

            -- Who the current session is: its role, or for the fleet's role the device its
            -- gateway set (NULL when none was: it then reads and writes nothing of anyone's).
            -- A role named as a device would be (device+…) is nobody: NULL too.
            CREATE OR REPLACE FUNCTION groupstore.user_name() RETURNS text
            LANGUAGE sql STABLE PARALLEL SAFE
            RETURN CASE WHEN current_user = 'groupstore_device'
              THEN 'device+' || nullif(current_setting('groupstore.device', true), '')
              WHEN current_user::text LIKE 'device+%' THEN NULL
              ELSE current_user::text END;

            CREATE OR REPLACE FUNCTION groupstore.may_read(p_zone text) RETURNS boolean
            LANGUAGE sql STABLE PARALLEL SAFE
            RETURN p_zone = 'public' OR p_zone = 'private/' || groupstore.user_name()
              OR groupstore.zone_owner(p_zone) = groupstore.user_name()
              OR EXISTS (SELECT 1 FROM groupstore.shares AS s
                         WHERE s.member = groupstore.user_name() AND p_zone = 'shared/' || s.owner || '/' || s.zone);
            CREATE OR REPLACE FUNCTION groupstore.may_write(p_zone text) RETURNS boolean
            LANGUAGE sql STABLE PARALLEL SAFE
            RETURN groupstore.zone_owner(p_zone) = groupstore.user_name()
              OR EXISTS (SELECT 1 FROM groupstore.shares AS s
                         WHERE s.member = groupstore.user_name() AND s.can_write AND p_zone = 'shared/' || s.owner || '/' || s.zone);

            DROP POLICY IF EXISTS gs_read ON groupstore.change_log;
            CREATE POLICY gs_read ON groupstore.change_log FOR SELECT TO groupstore_user
              USING (zone = 'public' OR zone = 'private/' || groupstore.user_name() OR (zone LIKE 'shared/%' AND groupstore.may_read(zone)));
            DROP POLICY IF EXISTS gs_read ON groupstore.tombstones;
            CREATE POLICY gs_read ON groupstore.tombstones FOR SELECT TO groupstore_user
              USING (zone = 'public' OR zone = 'private/' || groupstore.user_name() OR (zone LIKE 'shared/%' AND groupstore.may_read(zone)));
            DROP POLICY IF EXISTS gs_read ON groupstore.asset_refs;
            CREATE POLICY gs_read ON groupstore.asset_refs FOR SELECT TO groupstore_user
              USING (zone = 'public' OR zone = 'private/' || groupstore.user_name() OR (zone LIKE 'shared/%' AND groupstore.may_read(zone)));
            DROP POLICY IF EXISTS gs_read ON groupstore.assets;
            CREATE POLICY gs_read ON groupstore.assets FOR SELECT TO groupstore_user
              USING (owner = groupstore.user_name() OR EXISTS (SELECT 1 FROM groupstore.asset_refs AS r WHERE r.hash = assets.hash));
            DROP POLICY IF EXISTS gs_add ON groupstore.assets;
            CREATE POLICY gs_add ON groupstore.assets FOR INSERT TO groupstore_user WITH CHECK (owner = groupstore.user_name());
            ALTER TABLE groupstore.assets ALTER COLUMN owner SET DEFAULT groupstore.user_name();
            DROP POLICY IF EXISTS gs_owner ON groupstore.shares;
            CREATE POLICY gs_owner ON groupstore.shares TO groupstore_user
              USING (owner = groupstore.user_name()) WITH CHECK (owner = groupstore.user_name());
            DROP POLICY IF EXISTS gs_member ON groupstore.shares;
            CREATE POLICY gs_member ON groupstore.shares FOR SELECT TO groupstore_user USING (member = groupstore.user_name());
            ALTER TABLE groupstore.shares ALTER COLUMN owner SET DEFAULT groupstore.user_name();

            -- The policies of a typed table's users, by its scope (the schema owner's gs_admin stays).
            CREATE OR REPLACE FUNCTION groupstore.install_policies(p_name text) RETURNS void
            LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_scope text;
              v_table text := format('public.%I', p_name);
              v_policy text;
            BEGIN
              SELECT scope INTO v_scope FROM groupstore.types WHERE name = p_name;
              IF NOT FOUND OR to_regclass(v_table) IS NULL THEN RETURN; END IF;
              FOREACH v_policy IN ARRAY ARRAY['gs_owner', 'gs_read', 'gs_insert', 'gs_update', 'gs_delete'] LOOP
                EXECUTE format('DROP POLICY IF EXISTS %I ON %s', v_policy, v_table);
              END LOOP;
              IF v_scope = 'private' THEN
                EXECUTE format('CREATE POLICY gs_owner ON %s TO groupstore_user USING (gs_owner = groupstore.user_name()) WITH CHECK (gs_owner = groupstore.user_name())', v_table);
              ELSIF v_scope = 'shared' THEN
                EXECUTE format('CREATE POLICY gs_read ON %s FOR SELECT TO groupstore_user USING (groupstore.may_read(gs_zone))', v_table);
                EXECUTE format('CREATE POLICY gs_insert ON %s FOR INSERT TO groupstore_user WITH CHECK (gs_owner = groupstore.user_name() AND groupstore.may_write(gs_zone))', v_table);
                EXECUTE format('CREATE POLICY gs_update ON %s FOR UPDATE TO groupstore_user USING (groupstore.may_write(gs_zone)) WITH CHECK (groupstore.may_write(gs_zone))', v_table);
                EXECUTE format('CREATE POLICY gs_delete ON %s FOR DELETE TO groupstore_user USING (groupstore.may_write(gs_zone))', v_table);
              ELSE
                EXECUTE format('CREATE POLICY gs_read ON %s FOR SELECT TO groupstore_user USING (true)', v_table);
                EXECUTE format('CREATE POLICY gs_insert ON %s FOR INSERT TO groupstore_user WITH CHECK (gs_owner = groupstore.user_name())', v_table);
                EXECUTE format('CREATE POLICY gs_update ON %s FOR UPDATE TO groupstore_user USING (gs_owner = groupstore.user_name()) WITH CHECK (gs_owner = groupstore.user_name())', v_table);
                EXECUTE format('CREATE POLICY gs_delete ON %s FOR DELETE TO groupstore_user USING (gs_owner = groupstore.user_name())', v_table);
              END IF;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.install_policies(text) FROM PUBLIC;

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
              -- Format 9: and the policies of its users (a table is created with them).
              PERFORM groupstore.install_policies(p_name);
            END $fn$;

            DO $do$ DECLARE v_name text; BEGIN
              FOR v_name IN SELECT name FROM groupstore.types LOOP PERFORM groupstore.install_policies(v_name); END LOOP;
            END $do$;

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
              v_user text := groupstore.user_name();
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
              -- Format 9: the fleet's role is a device only with the device a gateway set.
              IF v_user IS NULL THEN
                RAISE EXCEPTION USING ERRCODE = '42501',
                  MESSAGE = format('%s: groupstore_device writes as a device, which only a gateway sets (groupstore.device)', TG_TABLE_NAME);
              END IF;
              IF TG_OP = 'INSERT' THEN
                NEW.gs_owner := v_user;
                IF v_type.scope = 'shared' THEN
                  -- A shared table holds the rows of many shared zones: the row names its own.
                  IF NEW.gs_zone IS NULL OR groupstore.zone_owner(NEW.gs_zone) IS NULL THEN
                    RAISE EXCEPTION USING ERRCODE = '23502',
                      MESSAGE = format('%s is a shared table: give each row its zone, gs_zone = ''shared/<owner>/<zone name>''', TG_TABLE_NAME);
                  END IF;
                ELSE
                  NEW.gs_zone := CASE v_type.scope WHEN 'public' THEN 'public' ELSE 'private/' || v_user END;
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
              NEW.gs_edited_by := v_user;
              RETURN NEW;
            END $fn$;

            CREATE TABLE IF NOT EXISTS groupstore.hosts (
              user_name text NOT NULL DEFAULT groupstore.user_name(),
              host text NOT NULL CHECK (octet_length(host) BETWEEN 1 AND 800),
              app_version text CHECK (octet_length(app_version) <= 256),
              tokens jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(tokens) = 'object' AND octet_length(tokens::text) <= 65536),
              pending bigint NOT NULL DEFAULT 0,
              parked bigint NOT NULL DEFAULT 0,
              last_error text CHECK (octet_length(last_error) <= 2000),
              synced_at timestamptz,
              seen_at timestamptz NOT NULL DEFAULT now(),
              PRIMARY KEY (user_name, host)
            );
            ALTER TABLE groupstore.hosts ENABLE ROW LEVEL SECURITY;
            ALTER TABLE groupstore.hosts FORCE ROW LEVEL SECURITY;
            DROP POLICY IF EXISTS gs_admin ON groupstore.hosts;
            CREATE POLICY gs_admin ON groupstore.hosts TO CURRENT_USER USING (true) WITH CHECK (true);
            DROP POLICY IF EXISTS gs_own ON groupstore.hosts;
            CREATE POLICY gs_own ON groupstore.hosts TO groupstore_user
              USING (user_name = groupstore.user_name()) WITH CHECK (user_name = groupstore.user_name());
            GRANT SELECT, INSERT, UPDATE ON groupstore.hosts TO groupstore_user;

            -- How far behind a host of p_user is in p_zone, read up to (p_tx, p_seq): the changes
            -- logged after it whose record another user wrote last (its own uploads come back to it
            -- as echoes it need not fetch). For the schema's owner (cloud fleet).
            CREATE OR REPLACE FUNCTION groupstore.behind(p_zone text, p_tx xid8, p_seq bigint, p_user text) RETURNS bigint
            LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_type text;
              v_count bigint := 0;
              v_found bigint;
            BEGIN
              FOR v_type IN SELECT DISTINCT c.type FROM groupstore.change_log AS c WHERE c.zone = p_zone AND (c.tx, c.seq) > (p_tx, p_seq) LOOP
                IF to_regclass(format('public.%I', v_type)) IS NULL THEN CONTINUE; END IF;
                EXECUTE format('SELECT count(*) FROM groupstore.change_log AS c LEFT JOIN public.%I AS r ON r.gs_zone = c.zone AND r.gs_name = c.name '
                  'WHERE c.zone = $1 AND c.type = $2 AND (c.tx, c.seq) > ($3, $4) AND r.gs_edited_by IS DISTINCT FROM $5', v_type)
                  INTO v_found USING p_zone, v_type, p_tx, p_seq, p_user;
                v_count := v_count + v_found;
              END LOOP;
              RETURN v_count;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.behind(text, xid8, bigint, text) FROM PUBLIC;

            CREATE OR REPLACE FUNCTION groupstore.prepare_type(p_name text, p_scope text, p_columns jsonb) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_caller text := CASE WHEN current_setting('role') IN ('none', '') THEN session_user ELSE current_setting('role') END;
              v_known text;
              v_scope text;
              v_creator text;
              v_holds boolean;
            BEGIN
              IF p_scope IN ('public', 'shared')
                AND (v_caller = current_user OR EXISTS (SELECT 1 FROM pg_roles WHERE rolname = v_caller AND rolsuper)) THEN
                PERFORM pg_advisory_xact_lock(hashtext('groupstore.prepare_type'));
                SELECT name, scope, creator INTO v_known, v_scope, v_creator FROM groupstore.types
                  WHERE lower(name) = lower(p_name) ORDER BY name = p_name DESC LIMIT 1;
                IF v_known IS NOT NULL AND v_scope = 'private' AND v_creator IS NOT NULL THEN
                  -- Locked first: a row the user is inserting now is committed before the look, or waits.
                  EXECUTE format('LOCK TABLE public.%I IN ACCESS EXCLUSIVE MODE', v_known);
                  EXECUTE format('SELECT EXISTS (SELECT 1 FROM public.%I)', v_known) INTO v_holds;
                  IF NOT v_holds AND NOT EXISTS (SELECT 1 FROM groupstore.tombstones WHERE type = v_known) THEN
                    EXECUTE format('DROP TABLE public.%I', v_known);
                    DELETE FROM groupstore.types WHERE name = v_known;
                  END IF;
                END IF;
              END IF;
              PERFORM groupstore.prepare_type_declared(p_name, p_scope, p_columns);
              -- Format 9: a type a device created is the schema owner's (devices share one role,
              -- so as its creator every device could add columns to it).
              IF v_caller = 'groupstore_device' THEN
                UPDATE groupstore.types SET creator = NULL WHERE lower(name) = lower(p_name) AND creator = 'groupstore_device';
              END IF;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.prepare_type(text, text, jsonb) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION groupstore.prepare_type(text, text, jsonb) TO groupstore_user;

            UPDATE groupstore.meta SET value = '9' WHERE key = 'format';
            """#
    }
#endif  // Postgres
