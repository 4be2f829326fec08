#if Postgres
    extension PostgresServerSchema {
        /// Migration `groupstore.postgres.history-guard` (format 6).
        ///
        /// - `groupstore.history(seq)` again, in PL/pgSQL (its plans kept for
        ///   the session): a bridge's every fetch and upload reads it now; and
        ///   `groupstore.hint_tag(text)`, which every write's notification
        ///   calls, likewise.
        /// - `groupstore.require_history(epoch, seq, tx)`: raises `GS010` when
        ///   the change a bridge saw last (its ``CloudHistoryMark``) is not
        ///   part of the server's history: another epoch (set up again), a log
        ///   that ends before it, or another transaction logged at its position
        ///   (restored from a dump and written to since). A pruned position is
        ///   kept, as the bridge's ``CloudDatabase/history(keeping:)`` rules.
        ///   Called before the changes of a `modify`'s transaction, it aborts
        ///   the transaction: nothing is written on top of tags the server may
        ///   have issued again (the review's F2).
        /// - The schema owner's declaration of a public or shared type takes
        ///   back a private type of that name a user created that holds nothing
        ///   yet (no row, no tombstone: the review's F4, a name squatted before
        ///   the owner declared it); one that holds rows is still refused,
        ///   naming the user. (`prepare_type` of `declared-types` is kept as
        ///   `prepare_type_declared`, which the new `prepare_type` calls.)
        /// - Types users created under format 4 are cleared of creators that
        ///   format 5 would not have recorded (the review's F5): a public or
        ///   shared type is the schema owner's, and a type a gateway's
        ///   authenticator created (every gateway user was the authenticator to
        ///   format 4) is nobody's to extend but the owner's.
        static let historyGuard = #"""
            -- In PL/pgSQL, whose plans are kept for the session: every fetch and upload of a bridge
            -- reads it now, and the SQL function of format 4 was planned on each call (100 us
            -- against 15, measured in a loop of 2,000 calls).
            CREATE OR REPLACE FUNCTION groupstore.history(p_seq bigint)
            RETURNS TABLE (o_epoch text, o_head text, o_head_tx text, o_tx text, o_horizon text, o_now text)
            LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_seq bigint;
              v_tx xid8;
            BEGIN
              SELECT c.seq, c.tx INTO v_seq, v_tx FROM groupstore.change_log AS c ORDER BY c.seq DESC LIMIT 1;
              o_epoch := (SELECT m.value FROM groupstore.meta AS m WHERE m.key = 'epoch');
              o_head := coalesce(v_seq, 0)::text;
              o_head_tx := coalesce(v_tx::text, '');
              o_tx := (SELECT c.tx::text FROM groupstore.change_log AS c WHERE c.seq = p_seq);
              o_horizon := (SELECT m.value FROM groupstore.meta AS m WHERE m.key = 'horizon_seq');
              o_now := extract(epoch FROM clock_timestamp())::text;
              RETURN NEXT;
            END $fn$;

            -- Likewise the zone tag every write's notification carries: planned on each call as a
            -- SQL function with its own search_path (63 us a write in pg_stat_user_functions; 24 now).
            CREATE OR REPLACE FUNCTION groupstore.hint_tag(p_text text) RETURNS text
            LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
            BEGIN
              RETURN left(encode(sha256(convert_to((SELECT k.key FROM groupstore.hint_key AS k LIMIT 1) || ':' || p_text, 'UTF8')), 'hex'), 16);
            END $fn$;

            CREATE OR REPLACE FUNCTION groupstore.require_history(p_epoch text, p_seq bigint, p_tx text) RETURNS void
            LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v record;
            BEGIN
              SELECT * INTO v FROM groupstore.history(p_seq);
              IF v.o_epoch IS DISTINCT FROM p_epoch OR p_seq > v.o_head::bigint
                OR (p_seq > 0 AND p_tx <> '' AND CASE WHEN v.o_tx IS NULL THEN p_seq > coalesce(v.o_horizon, '0')::bigint
                                                      ELSE v.o_tx <> '' AND v.o_tx <> p_tx END)
              THEN
                RAISE EXCEPTION USING ERRCODE = 'GS010',
                  MESSAGE = format('the change at %s of epoch %s is not part of this server''s history (epoch %s, log at %s)',
                    p_seq, left(p_epoch, 8), left(v.o_epoch, 8), v.o_head);
              END IF;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.require_history(text, bigint, text) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION groupstore.require_history(text, bigint, text) TO groupstore_user;

            -- The owner's declaration of a public or shared type takes back a private type of the
            -- same name that a user created and that holds nothing yet (no row, no tombstone): the
            -- user's table is dropped and declared again as the owner says. One that holds rows is
            -- refused as before, naming the user.
            -- Idempotent, as every migration run again on a server whose record of them was lost.
            DO $do$ BEGIN
              IF NOT EXISTS (SELECT 1 FROM pg_proc WHERE oid = 'groupstore.prepare_type(text,text,jsonb)'::regprocedure
                             AND prosrc LIKE '%prepare_type_declared%') THEN
                DROP FUNCTION IF EXISTS groupstore.prepare_type_declared(text, text, jsonb);
                ALTER FUNCTION groupstore.prepare_type(text, text, jsonb) RENAME TO prepare_type_declared;
              END IF;
            END $do$;
            REVOKE ALL ON FUNCTION groupstore.prepare_type_declared(text, text, jsonb) FROM PUBLIC, groupstore_user;
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
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.prepare_type(text, text, jsonb) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION groupstore.prepare_type(text, text, jsonb) TO groupstore_user;

            UPDATE groupstore.types AS t SET creator = NULL
              WHERE t.creator IS NOT NULL AND (t.scope <> 'private' OR EXISTS (
                SELECT 1 FROM pg_auth_members AS m JOIN pg_roles AS r ON r.oid = m.member JOIN pg_roles AS g ON g.oid = m.roleid
                WHERE g.rolname = 'groupstore_gateway' AND r.rolname = t.creator));

            UPDATE groupstore.meta SET value = '6' WHERE key = 'format';
            """#
    }
#endif  // Postgres
