-- Past one site. A site forwards every applied hop to a central
-- stockhop-site through an outbox; a central keeps the sites it has heard
-- from and the hops they sent.

-- Site side. One row while `serve` runs with --central-url (written at
-- start, deleted at a start without it): while it is there, every hop
-- takes an outbox row in the transaction that appends it.
CREATE TABLE central_forwarding (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    site_id     TEXT NOT NULL,
    central_url TEXT NOT NULL,
    since       INTEGER NOT NULL
) STRICT;

-- The outbox's order: the next seq is taken from this one row, so seqs
-- follow commit order (a writer holds the row until it commits) and are
-- never reused, even after done rows are pruned.
CREATE TABLE central_outbox_clock (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  INTEGER NOT NULL CHECK (seq >= 0)
) STRICT;
INSERT INTO central_outbox_clock (id, seq) VALUES (1, 0);

-- One row per hop to forward, in hop order. pending → done (central
-- answered applied or replayed) or dead (central refuses it for good,
-- with its answer). Only done rows are ever deleted, after the retention
-- period; a trigger refuses deleting any other.
CREATE TABLE central_outbox (
    seq          INTEGER PRIMARY KEY NOT NULL CHECK (seq > 0),
    hop_id       INTEGER NOT NULL UNIQUE REFERENCES hops (hop_id),
    state        TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'dead')),
    attempts     INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    dead_status  INTEGER,
    dead_reason  TEXT,
    settled_at   INTEGER,
    CHECK ((state = 'dead') = (dead_reason IS NOT NULL)),
    CHECK ((state = 'pending') = (settled_at IS NULL))
) STRICT;
CREATE INDEX central_outbox_pending ON central_outbox (seq) WHERE state = 'pending';
CREATE INDEX central_outbox_done ON central_outbox (settled_at) WHERE state = 'done';

CREATE TRIGGER hops_central_outbox AFTER INSERT ON hops
WHEN EXISTS (SELECT 1 FROM central_forwarding)
BEGIN
    UPDATE central_outbox_clock SET seq = seq + 1 WHERE id = 1;
    INSERT INTO central_outbox (seq, hop_id)
        SELECT seq, NEW.hop_id FROM central_outbox_clock WHERE id = 1;
END;
CREATE TRIGGER central_outbox_keep_undone BEFORE DELETE ON central_outbox
WHEN OLD.state <> 'done'
BEGIN
    SELECT RAISE(ABORT, 'only done outbox rows are deleted');
END;

-- Central side. The sites it has heard from.
CREATE TABLE central_sites (
    site_id        TEXT PRIMARY KEY NOT NULL,
    first_seen_at  INTEGER NOT NULL,
    last_seen_at   INTEGER NOT NULL,
    hops_received  INTEGER NOT NULL DEFAULT 0 CHECK (hops_received >= 0),
    last_seq       INTEGER NOT NULL DEFAULT 0 CHECK (last_seq >= 0)
) STRICT;

-- The hops they sent, each once by (site, key), in seq order per site:
-- the site's hop as JSON and the SHA-256 of its canonical form (a resend
-- with another body is refused by it). Append-only.
CREATE TABLE central_hops (
    received_id  INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id      TEXT NOT NULL REFERENCES central_sites (site_id),
    key          TEXT NOT NULL,
    seq          INTEGER NOT NULL CHECK (seq > 0),
    hop          TEXT NOT NULL,
    hop_sha256   TEXT NOT NULL,
    received_at  INTEGER NOT NULL,
    UNIQUE (site_id, key),
    UNIQUE (site_id, seq)
) STRICT;
CREATE TRIGGER central_hops_refuse_update BEFORE UPDATE ON central_hops
BEGIN
    SELECT RAISE(ABORT, 'central hops are append-only');
END;
CREATE TRIGGER central_hops_refuse_delete BEFORE DELETE ON central_hops
BEGIN
    SELECT RAISE(ABORT, 'central hops are append-only');
END;
