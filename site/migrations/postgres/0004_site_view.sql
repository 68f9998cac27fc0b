-- PostgreSQL twin of ../0004_site_view.sql. The site's view: admin tokens
-- and their browser sessions, a short history of heartbeats for the
-- dashboard's chart and trend, revoked devices, and the indexes the
-- dashboard's reads need.

-- A person who may open the site's view. The token is kept only as its
-- SHA-256, like a device's.
CREATE TABLE admins (
    name          TEXT COLLATE "C" NOT NULL,
    token_sha256  TEXT COLLATE "C" NOT NULL,
    added_at      BIGINT NOT NULL,
    CONSTRAINT u__admins__name PRIMARY KEY (name),
    CONSTRAINT u__admins__token_sha256 UNIQUE (token_sha256)
);

-- A signed-in dashboard: the cookie's SHA-256, its CSRF token and when it
-- ends. Revoking the admin ends its sessions.
CREATE TABLE admin_sessions (
    session_sha256  TEXT COLLATE "C" NOT NULL,
    admin           TEXT COLLATE "C" NOT NULL REFERENCES admins (name) ON DELETE CASCADE,
    csrf_token      TEXT COLLATE "C" NOT NULL,
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    CONSTRAINT u__admin_sessions__session_sha256 PRIMARY KEY (session_sha256)
);
CREATE INDEX admin_sessions_by_expiry ON admin_sessions (expires_at);

-- Every heartbeat a handheld sent, kept for a bounded window (pruned as
-- new ones arrive): the chart's queue depth and the trend read it.
CREATE TABLE heartbeat_log (
    device_id         TEXT COLLATE "C" NOT NULL,
    at                BIGINT NOT NULL,
    queue_depth       BIGINT NOT NULL,
    oldest_queued_at  BIGINT
);
CREATE INDEX heartbeat_log_by_device ON heartbeat_log (device_id, at);
-- Covering: the chart sweeps a window of heartbeats in time order.
CREATE INDEX heartbeat_log_by_time ON heartbeat_log (at, device_id, queue_depth);

-- A revoked device: it leaves the view (its stored token hash is replaced
-- too, so the token no longer syncs). Its hops stay.
CREATE TABLE device_revocations (
    device_id   TEXT COLLATE "C" NOT NULL REFERENCES devices (device_id),
    revoked_at  BIGINT NOT NULL,
    CONSTRAINT u__device_revocations__device_id PRIMARY KEY (device_id)
);

-- Hops by the time the site recorded them, covering the sync-latency
-- figures (capture -> recorded of handheld hops).
CREATE INDEX hops_by_recorded ON hops (recorded_at, occurred_at, source_mode);

-- SQLite's json_valid and json_extract for the one shape the site's SQL
-- uses them in (`CASE WHEN json_valid(doc) THEN json_extract(doc, '$.key')
-- END`), so that SQL, and the partial index below, read the same on both.
-- json_valid: whether the text is RFC 8259 JSON (true/false here, 1/0 in
-- SQLite; only ever used as a condition). NULL gives NULL.
CREATE FUNCTION json_valid(doc TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    PERFORM doc::json;
    RETURN true;
EXCEPTION WHEN invalid_text_representation OR untranslatable_character THEN
    RETURN false;
END
$$;

-- json_extract for object-member paths only ('$.a', '$.a.b'; any other
-- path is refused rather than read differently). The value comes back as
-- text: a string without its quotes, null as NULL, true/false as '1'/'0'
-- (SQLite's 1/0), a number, object or array as its JSON text. Malformed
-- JSON is an error, as in SQLite.
CREATE FUNCTION json_extract(doc TEXT, path TEXT) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    value JSON;
BEGIN
    IF path !~ '^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$' THEN
        RAISE EXCEPTION 'json_extract: unsupported path %', path
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    value := doc::json #> string_to_array(substr(path, 3), '.');
    RETURN CASE json_typeof(value)
        WHEN 'string' THEN value #>> '{}'
        WHEN 'null' THEN NULL
        WHEN 'boolean' THEN CASE WHEN value::text = 'true' THEN '1' ELSE '0' END
        ELSE value::text
    END;
END
$$;

-- Rejected items, the correction list: only final answers that say so.
CREATE INDEX receipts_rejected ON receipts (received_at)
    WHERE state = 'final'
      AND CASE WHEN json_valid(response) THEN json_extract(response, '$.outcome') END = 'rejected';
