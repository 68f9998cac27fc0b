-- A terminal's record is one record by its terminal, its capture instant
-- and its identity there: the queue's uniqueness takes the instant in,
-- as the identities kept past the horizon (`listener_seen`,
-- `listener_repeat`) already do. The old index on (terminal, identity)
-- put each new read at a random place in an index of millions (a portal's
-- identities are digests): at portal rates every commit rewrote one page
-- of it a read, and the prune pass another one a row it removed. Ordered
-- by the instant, both happen at its ends. The listener's keys are
-- minted in time order for the same reason.
--
-- SQLite cannot drop a table's constraint: the table is built again
-- (it holds minutes of rows: forwarded rows go once past the horizon),
-- keeping its sequence so no `seq` is handed out twice.
CREATE TABLE listener_queue_by_time (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Minted by the listener when it wrote the record; the ledger claims it.
    key             TEXT    NOT NULL UNIQUE,
    source          TEXT    NOT NULL CHECK (source IN ('iclock', 'zebra', 'framed')),
    device_serial   TEXT    NOT NULL,
    -- The terminal's own identity of the record (framed `id`, a digest of an
    -- ATTLOG line or a Zebra event): a resent record finds its first row.
    event_id        TEXT    NOT NULL,
    kind            TEXT    NOT NULL CHECK (kind IN ('attendance', 'tag_read', 'code_read')),
    subject         TEXT    NOT NULL,
    occurred_at     INTEGER NOT NULL,
    queued_at       INTEGER NOT NULL,
    rule_outcome    TEXT    NOT NULL CHECK (rule_outcome IN ('accepted', 'stale', 'clock_skew', 'rate_limited', 'duplicate')),
    -- The record exactly as received; bytes that are not UTF-8 stay as they came.
    raw             BLOB    NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'dead')),
    done_at         INTEGER,
    dead_status     INTEGER,
    dead_body       TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    last_attempt_at INTEGER,
    set_aside_at    INTEGER,
    next_attempt_at INTEGER,
    repeats         INTEGER NOT NULL DEFAULT 0,
    repeat_of       TEXT,
    repeat_number   INTEGER,
    last_repeat_at  INTEGER,
    UNIQUE (device_serial, occurred_at, event_id)
) STRICT;

INSERT INTO sqlite_sequence (name, seq)
    SELECT 'listener_queue_by_time', seq FROM sqlite_sequence WHERE name = 'listener_queue';

INSERT INTO listener_queue_by_time
    (seq, key, source, device_serial, event_id, kind, subject, occurred_at, queued_at, rule_outcome,
     raw, state, done_at, dead_status, dead_body, attempts, last_error, last_attempt_at,
     set_aside_at, next_attempt_at, repeats, repeat_of, repeat_number, last_repeat_at)
SELECT seq, key, source, device_serial, event_id, kind, subject, occurred_at, queued_at, rule_outcome,
       raw, state, done_at, dead_status, dead_body, attempts, last_error, last_attempt_at,
       set_aside_at, next_attempt_at, repeats, repeat_of, repeat_number, last_repeat_at
FROM listener_queue;

DROP TABLE listener_queue;
ALTER TABLE listener_queue_by_time RENAME TO listener_queue;

CREATE INDEX listener_queue_pending ON listener_queue (seq) WHERE state = 'pending';
CREATE INDEX listener_queue_set_aside ON listener_queue (next_attempt_at)
    WHERE state = 'pending' AND set_aside_at IS NOT NULL;
CREATE INDEX listener_queue_forwarded ON listener_queue (occurred_at) WHERE state = 'done';
CREATE INDEX listener_queue_dead ON listener_queue (seq) WHERE state = 'dead';
CREATE INDEX listener_queue_waiting_repeat ON listener_queue (repeat_of)
    WHERE state = 'pending' AND repeat_of IS NOT NULL;
