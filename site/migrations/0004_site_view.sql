-- The site's view: admin tokens and their browser sessions, a short
-- history of heartbeats for the dashboard's chart and trend, revoked
-- devices, and the indexes the dashboard's reads need.

-- A person who may open the site's view. The token is kept only as its
-- SHA-256, like a device's.
CREATE TABLE admins (
    name          TEXT PRIMARY KEY NOT NULL,
    token_sha256  TEXT NOT NULL UNIQUE,
    added_at      INTEGER NOT NULL
) STRICT;

-- A signed-in dashboard: the cookie's SHA-256, its CSRF token and when it
-- ends. Revoking the admin ends its sessions.
CREATE TABLE admin_sessions (
    session_sha256  TEXT PRIMARY KEY NOT NULL,
    admin           TEXT NOT NULL REFERENCES admins (name) ON DELETE CASCADE,
    csrf_token      TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX admin_sessions_by_expiry ON admin_sessions (expires_at);

-- Every heartbeat a handheld sent, kept for a bounded window (pruned as
-- new ones arrive): the chart's queue depth and the trend read it.
CREATE TABLE heartbeat_log (
    device_id         TEXT NOT NULL,
    at                INTEGER NOT NULL,
    queue_depth       INTEGER NOT NULL,
    oldest_queued_at  INTEGER
) STRICT;
CREATE INDEX heartbeat_log_by_device ON heartbeat_log (device_id, at);
-- Covering: the chart sweeps a window of heartbeats in time order.
CREATE INDEX heartbeat_log_by_time ON heartbeat_log (at, device_id, queue_depth);

-- A revoked device: it leaves the view (its stored token hash is replaced
-- too, so the token no longer syncs). Its hops stay.
CREATE TABLE device_revocations (
    device_id   TEXT PRIMARY KEY NOT NULL REFERENCES devices (device_id),
    revoked_at  INTEGER NOT NULL
) STRICT;

-- Hops by the time the site recorded them, covering the sync-latency
-- figures (capture -> recorded of handheld hops).
CREATE INDEX hops_by_recorded ON hops (recorded_at, occurred_at, source_mode);

-- Rejected items, the correction list: only final answers that say so.
CREATE INDEX receipts_rejected ON receipts (received_at)
    WHERE state = 'final'
      AND CASE WHEN json_valid(response) THEN json_extract(response, '$.outcome') END = 'rejected';
