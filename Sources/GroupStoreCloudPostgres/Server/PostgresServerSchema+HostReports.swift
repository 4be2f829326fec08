#if Postgres
    extension PostgresServerSchema {
        /// Migration `groupstore.postgres.host-reports` (format 11):
        /// `groupstore.report_hosts(reports)`, for `groupstore_gateway` only:
        /// the host reports a gateway collected from its clients
        /// (``GroupStoreCloud/CloudHostReport``), each kept as its user's entry
        /// in `groupstore.hosts`, in one statement. A fleet's devices report
        /// every few seconds while they sync (``GroupStoreCloud/CloudSyncConfiguration/progressInterval``):
        /// one transaction per report was about 2,000 a second for 10,000
        /// devices; a gateway now writes what it collected once a second.
        ///
        /// Each report names the role and device the gateway verified (its
        /// token's); its user is `groupstore.user_of(role, device)`, the rule
        /// of ``fleet``'s `groupstore.user_name()` (`device+<sub>` for the
        /// fleet's role, the role for any other, nobody for a role named as a
        /// device would be), which now reads it from there. A report is kept only
        /// for a role the calling session's login role may become (granted to
        /// it), so a gateway reports only for whom it may act as; the last
        /// report of a user's host in the list wins.
        static let hostReports = #"""
            -- Who a session of p_role is, p_device the device its gateway named (see user_name()).
            CREATE OR REPLACE FUNCTION groupstore.user_of(p_role text, p_device text) RETURNS text
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            RETURN CASE WHEN p_role = 'groupstore_device' THEN 'device+' || nullif(p_device, '')
              WHEN p_role LIKE 'device+%' THEN NULL
              ELSE p_role END;
            CREATE OR REPLACE FUNCTION groupstore.user_name() RETURNS text
            LANGUAGE sql STABLE PARALLEL SAFE
            RETURN groupstore.user_of(current_user::text, current_setting('groupstore.device', true));

            CREATE OR REPLACE FUNCTION groupstore.report_hosts(p_reports jsonb) RETURNS bigint
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
            DECLARE
              v_kept bigint;
            BEGIN
              INSERT INTO groupstore.hosts AS h (user_name, host, app_version, tokens, pending, parked, last_error, synced_at, seen_at)
              SELECT DISTINCT ON (u.name, r.host) u.name, r.host, r.app_version, coalesce(r.tokens, '{}'), coalesce(r.pending, 0),
                coalesce(r.parked, 0), r.last_error,
                CASE WHEN abs(r.synced_at) < 1e11 THEN to_timestamp(r.synced_at) END, now()
              FROM jsonb_array_elements(p_reports) WITH ORDINALITY AS e(report, n)
              CROSS JOIN LATERAL jsonb_to_record(e.report)
                AS r(role text, device text, host text, app_version text, tokens jsonb, pending bigint, parked bigint,
                     last_error text, synced_at double precision)
              JOIN pg_roles AS g ON g.rolname = r.role
              CROSS JOIN LATERAL (SELECT groupstore.user_of(r.role, r.device) AS name) AS u
              WHERE u.name IS NOT NULL AND pg_has_role(session_user, g.oid, 'MEMBER')
              ORDER BY u.name, r.host, e.n DESC
              ON CONFLICT (user_name, host) DO UPDATE SET app_version = excluded.app_version, tokens = excluded.tokens,
                pending = excluded.pending, parked = excluded.parked, last_error = excluded.last_error,
                synced_at = coalesce(excluded.synced_at, h.synced_at), seen_at = now();
              GET DIAGNOSTICS v_kept = ROW_COUNT;
              RETURN v_kept;
            END $fn$;
            REVOKE ALL ON FUNCTION groupstore.report_hosts(jsonb) FROM PUBLIC;
            GRANT EXECUTE ON FUNCTION groupstore.report_hosts(jsonb) TO groupstore_gateway;
            UPDATE groupstore.meta SET value = '11' WHERE key = 'format';
            """#
    }
#endif  // Postgres
