#if Postgres
    extension PostgresServerSchema {
        /// Migration `groupstore.postgres.declared-types` (format 5): who decides
        /// a record type for everyone (issue 30).
        ///
        /// - **Public and shared types are declared by the schema's owner** (a
        ///   superuser counts as one): `groupstore cloud setup --group DIR
        ///   --public-tables …` run as the owner, or a sync as the owner. A user
        ///   who syncs such a table first is refused with a sentence saying so,
        ///   instead of choosing its scope and columns for every other user.
        /// - **A user may create a private type** (its rows are the user's own);
        ///   its creator and the owner add columns to it, another user's values of
        ///   columns it lacks are kept in `gs_extra`. When the owner declares a
        ///   type a user created, the owner's columns are added and the type is
        ///   the owner's from then on.
        /// - **The caller is the role acting**: `SET ROLE` (a gateway's
        ///   `SET LOCAL ROLE`) counts, not only the login role. Format 4 took the
        ///   login role, so through a gateway every user was the gateway's
        ///   authenticator, and could add columns to any type another gateway
        ///   user created. `groupstore_user` itself prepares nothing.
        static let declaredTypes = #"""
            CREATE OR REPLACE FUNCTION groupstore.prepare_type(p_name text, p_scope text, p_columns jsonb) RETURNS void
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              -- The role acting: the one set with SET ROLE, else the login role (inside this
              -- function current_user is the schema's owner).
              v_caller text := CASE WHEN current_setting('role') IN ('none', '') THEN session_user ELSE current_setting('role') END;
              v_owner boolean;
              v_existing text;
              v_known text;
              v_creator text;
              v_col jsonb;
              v_type text;
              v_keys text[] := '{}';
              v_key_bytea boolean[] := '{}';
              v_table text := format('public.%I', p_name);
            BEGIN
              IF v_caller = 'groupstore_user' THEN
                RAISE EXCEPTION USING ERRCODE = '42501',
                  MESSAGE = format('table %s: groupstore_user is the role users are granted, not a user: prepare types as your own role (RESET ROLE)', p_name);
              END IF;
              v_owner := v_caller = current_user OR EXISTS (SELECT 1 FROM pg_roles WHERE rolname = v_caller AND rolsuper);
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
              -- Table names are matched as SQLite matches them (ignoring case): a type
              -- prepared as Memo and as memo is one type, under its first spelling.
              SELECT name, scope, creator INTO v_known, v_existing, v_creator FROM groupstore.types
                WHERE lower(name) = lower(p_name) ORDER BY name = p_name DESC LIMIT 1;
              IF v_known IS NOT NULL THEN
                p_name := v_known;
                v_table := format('public.%I', p_name);
              END IF;
              IF v_existing IS NOT NULL AND v_existing <> p_scope THEN
                RAISE EXCEPTION USING ERRCODE = 'GS001',
                  MESSAGE = format('record type %s is synced as %s; it cannot be synced as %s (%s declared it)',
                    p_name, v_existing, p_scope, coalesce(v_creator, 'the schema''s owner'));
              END IF;
              IF v_existing IS NULL THEN
                -- Format 5: a public or shared type is the same table for every user; only the
                -- schema's owner declares it.
                IF NOT v_owner AND p_scope <> 'private' THEN
                  RAISE EXCEPTION USING ERRCODE = '42501',
                    MESSAGE = format('record type %s is not declared on this server: a %s table is declared by the schema''s owner '
                      '(groupstore cloud setup --remote URL --group DIR --%s-tables %s, as the owner)', p_name, p_scope, p_scope, p_name);
                END IF;
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
                -- Its creator: the role acting, but for the schema's owner (NULL).
                v_creator := CASE WHEN v_owner THEN NULL ELSE v_caller END;
                INSERT INTO groupstore.types (name, scope, columns, key_columns, key_bytea, creator)
                  VALUES (p_name, p_scope, p_columns, v_keys, v_key_bytea, v_creator);
                PERFORM groupstore.install_triggers(p_name);
              ELSIF v_owner AND v_creator IS NOT NULL THEN
                -- The owner declares a type a user created: it is the owner's from now on.
                UPDATE groupstore.types SET creator = NULL WHERE name = p_name;
              END IF;
              -- Only the type's creator, or the schema's owner, adds columns to it; another
              -- user's values of columns it lacks are kept in gs_extra (carried, not lost).
              IF NOT v_owner AND v_creator IS DISTINCT FROM v_caller THEN RETURN; END IF;
              FOR v_col IN SELECT value FROM jsonb_array_elements(p_columns) LOOP
                IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = v_table::regclass AND attname = v_col ->> 'name' AND NOT attisdropped) THEN
                  EXECUTE format('ALTER TABLE %s ADD COLUMN %I %s', v_table, v_col ->> 'name', v_col ->> 'pgType');
                  IF v_col ->> 'pgType' = 'jsonb' THEN PERFORM groupstore.install_triggers(p_name); END IF;
                END IF;
              END LOOP;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.prepare_type(text, text, jsonb) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION groupstore.prepare_type(text, text, jsonb) TO groupstore_user;

            UPDATE groupstore.meta SET value = '5' WHERE key = 'format';
            """#
    }
#endif  // Postgres
