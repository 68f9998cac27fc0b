-- The ledger: devices and their tokens, capture sessions, idempotency
-- receipts, units, the append-only hop ledger, terminal events, device
-- heartbeats and closed periods. Instants are Unix milliseconds (UTC).

-- A device known to the site. The bearer token is kept only as its SHA-256.
CREATE TABLE devices (
    device_id     TEXT PRIMARY KEY NOT NULL,
    profile       TEXT NOT NULL CHECK (profile IN ('fxr90', 'mc3390xr', 'rfd40', 'zt411r')),
    token_sha256  TEXT NOT NULL UNIQUE,
    commissioned  INTEGER NOT NULL DEFAULT 0 CHECK (commissioned IN (0, 1)),
    added_at      INTEGER NOT NULL
) STRICT;

-- A capture session. The row exists from the first item the ledger takes
-- for it ('pending'), so its owner and its order cursor are known before
-- open_session applies. next_seq is the next client_seq to apply.
CREATE TABLE sessions (
    session_id   TEXT PRIMARY KEY NOT NULL,
    device_id    TEXT NOT NULL REFERENCES devices (device_id),
    state        TEXT NOT NULL CHECK (state IN ('pending', 'open', 'closed')),
    operator_id  TEXT,
    mode         TEXT,
    context      TEXT,
    opened_at    INTEGER,
    closed_at    INTEGER,
    next_seq     INTEGER NOT NULL DEFAULT 1 CHECK (next_seq >= 1)
) STRICT;
-- One open session per device and one per operator.
CREATE UNIQUE INDEX sessions_one_open_per_device ON sessions (device_id) WHERE state = 'open';
CREATE UNIQUE INDEX sessions_one_open_per_operator ON sessions (operator_id) WHERE state = 'open';

-- One row per claimed idempotency key: the claim, the hash of the item as
-- received and the stored answer. A buffered item keeps its JSON until it
-- applies. scope is the device id (keys are single-use per device across
-- every command) or the terminal listener's scope.
CREATE TABLE receipts (
    scope         TEXT NOT NULL,
    key           TEXT NOT NULL,
    session_id    TEXT,
    client_seq    INTEGER,
    command       TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('buffered', 'final')),
    item          TEXT,
    received_at   INTEGER NOT NULL,
    skew_ms       INTEGER NOT NULL,
    response      TEXT,
    PRIMARY KEY (scope, key),
    UNIQUE (session_id, client_seq)
) STRICT;

-- A client_seq passed over by a void that sits in another slot.
CREATE TABLE seq_voids (
    session_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    void_key    TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;

-- A unit, created the first time a scan names it.
CREATE TABLE units (
    unit_id        INTEGER PRIMARY KEY,
    epc            TEXT UNIQUE,
    code           TEXT UNIQUE,
    bin            TEXT,
    version        INTEGER NOT NULL CHECK (version >= 0),
    first_seen_at  INTEGER NOT NULL,
    CHECK (epc IS NOT NULL OR code IS NOT NULL)
) STRICT;

-- The hop ledger: append-only (the triggers below refuse UPDATE and DELETE).
CREATE TABLE hops (
    hop_id                INTEGER PRIMARY KEY AUTOINCREMENT,
    device_id             TEXT NOT NULL,
    session_id            TEXT,
    key                   TEXT NOT NULL,
    client_seq            INTEGER,
    command               TEXT NOT NULL,
    kind                  TEXT NOT NULL,
    mode                  TEXT,
    unit_id               INTEGER REFERENCES units (unit_id),
    from_bin              TEXT,
    to_bin                TEXT,
    unit_version          INTEGER,
    facts                 TEXT NOT NULL,
    occurred_at           INTEGER NOT NULL,
    booked_at             INTEGER NOT NULL,
    recorded_at           INTEGER NOT NULL,
    device_clock_skew_ms  INTEGER NOT NULL,
    source_mode           TEXT NOT NULL CHECK (source_mode IN ('live', 'sim', 'terminal')),
    compensates           INTEGER REFERENCES hops (hop_id),
    UNIQUE (device_id, key)
) STRICT;
CREATE UNIQUE INDEX hops_compensated_once ON hops (compensates) WHERE compensates IS NOT NULL;
CREATE INDEX hops_by_session ON hops (session_id, hop_id) WHERE session_id IS NOT NULL;
CREATE INDEX hops_by_unit ON hops (unit_id, hop_id) WHERE unit_id IS NOT NULL;

CREATE TRIGGER hops_refuse_update BEFORE UPDATE ON hops
BEGIN
    SELECT RAISE(ABORT, 'the hop ledger is append-only');
END;
CREATE TRIGGER hops_refuse_delete BEFORE DELETE ON hops
BEGIN
    SELECT RAISE(ABORT, 'the hop ledger is append-only');
END;

-- Records forwarded by the terminal listener, with their three clocks and
-- the listener's rule outcome. Append-only like the hops.
CREATE TABLE terminal_events (
    key            TEXT PRIMARY KEY NOT NULL,
    source         TEXT NOT NULL,
    device_serial  TEXT NOT NULL,
    kind           TEXT NOT NULL,
    subject        TEXT NOT NULL,
    occurred_at    INTEGER NOT NULL,
    queued_at      INTEGER NOT NULL,
    recorded_at    INTEGER NOT NULL,
    rule_outcome   TEXT NOT NULL,
    raw            TEXT NOT NULL,
    hop_id         INTEGER REFERENCES hops (hop_id)
) STRICT;
CREATE TRIGGER terminal_events_refuse_update BEFORE UPDATE ON terminal_events
BEGIN
    SELECT RAISE(ABORT, 'terminal events are append-only');
END;
CREATE TRIGGER terminal_events_refuse_delete BEFORE DELETE ON terminal_events
BEGIN
    SELECT RAISE(ABORT, 'terminal events are append-only');
END;

-- Last-seen per device, handheld or terminal, for the site dashboard.
CREATE TABLE device_heartbeats (
    device_id         TEXT PRIMARY KEY NOT NULL,
    source            TEXT NOT NULL,
    last_seen_at      INTEGER NOT NULL,
    sent_at           INTEGER,
    queue_depth       INTEGER,
    oldest_queued_at  INTEGER,
    app_version       TEXT
) STRICT;

-- Closed periods: everything before closed_until is closed. Rows only grow.
CREATE TABLE periods (
    closed_until  INTEGER PRIMARY KEY NOT NULL,
    closed_at     INTEGER NOT NULL
) STRICT;
CREATE TRIGGER periods_refuse_update BEFORE UPDATE ON periods
BEGIN
    SELECT RAISE(ABORT, 'closed periods stay closed');
END;
CREATE TRIGGER periods_refuse_delete BEFORE DELETE ON periods
BEGIN
    SELECT RAISE(ABORT, 'closed periods stay closed');
END;
