-- The terminal listener's durable queue and its side tables. Every row is
-- written in one transaction with synchronous=FULL before the terminal is
-- acknowledged; the forwarder marks rows done (it never deletes them during
-- a drain) and a separate prune pass removes old done rows.

-- One row per terminal record, in arrival order (`seq`).
CREATE TABLE listener_queue (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Minted by the listener when it wrote the record; the ledger claims it.
    key           TEXT    NOT NULL UNIQUE,
    source        TEXT    NOT NULL CHECK (source IN ('iclock', 'zebra', 'framed')),
    device_serial TEXT    NOT NULL,
    -- The terminal's own identity of the record (framed `id`, a digest of an
    -- ATTLOG line or a Zebra event): a resent record finds its first row.
    event_id      TEXT    NOT NULL,
    kind          TEXT    NOT NULL CHECK (kind IN ('attendance', 'tag_read', 'code_read')),
    subject       TEXT    NOT NULL,
    occurred_at   INTEGER NOT NULL,
    queued_at     INTEGER NOT NULL,
    rule_outcome  TEXT    NOT NULL CHECK (rule_outcome IN ('accepted', 'stale', 'clock_skew', 'rate_limited', 'duplicate')),
    -- The record exactly as received; bytes that are not UTF-8 stay as they came.
    raw           BLOB    NOT NULL,
    state         TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'dead')),
    done_at       INTEGER,
    dead_status   INTEGER,
    dead_body     TEXT,
    UNIQUE (device_serial, event_id)
) STRICT;

CREATE INDEX listener_queue_pending ON listener_queue (seq) WHERE state = 'pending';
CREATE INDEX listener_queue_done ON listener_queue (done_at) WHERE state = 'done';

-- Requests stored raw with their reply: OPERLOG, ATTPHOTO, options,
-- devicecmd results, and ATTLOG lines that could not be read.
CREATE TABLE listener_raw (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    device_serial TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    query         TEXT    NOT NULL,
    body          BLOB    NOT NULL,
    reason        TEXT,
    received_at   INTEGER NOT NULL
) STRICT;

-- A terminal's last-seen time; `forwarded_seen_at` is the last one the
-- ledger has taken, so each change is forwarded once.
CREATE TABLE listener_heartbeat (
    device_serial     TEXT    PRIMARY KEY NOT NULL,
    source            TEXT    NOT NULL,
    seen_at           INTEGER NOT NULL,
    forwarded_seen_at INTEGER
) STRICT;

-- The durable served record behind the in-memory duplicate window: one row
-- per accepted record the ledger took, written before its queue row is
-- marked done, read back on start.
CREATE TABLE listener_served (
    device_serial TEXT    NOT NULL,
    event_id      TEXT    NOT NULL,
    subject       TEXT    NOT NULL,
    occurred_at   INTEGER NOT NULL,
    served_at     INTEGER NOT NULL,
    PRIMARY KEY (device_serial, event_id)
) STRICT;

CREATE INDEX listener_served_occurred ON listener_served (occurred_at);
