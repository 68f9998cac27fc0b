-- PostgreSQL twin of ../0029_listener_repeat.sql: a repeat folded into the
-- waiting repeat row of the read it repeats keeps only its identity and
-- what the rate rules spend. The listener keeps its queue in the site's
-- own SQLite file whichever engine holds the ledger; the table is here so
-- both schemas stay alike.
CREATE TABLE listener_repeat (
    occurred_at   BIGINT NOT NULL,
    digest        BYTEA  NOT NULL CHECK (length(digest) = 8),
    device_serial TEXT COLLATE "C" NOT NULL,
    kind          TEXT COLLATE "C" NOT NULL,
    subject       TEXT COLLATE "C" NOT NULL,
    CONSTRAINT u__listener_repeat__occurred_at__digest PRIMARY KEY (occurred_at, digest)
);

ALTER TABLE listener_queue ADD COLUMN last_repeat_at BIGINT;

CREATE INDEX listener_queue_waiting_repeat ON listener_queue (repeat_of)
    WHERE state = 'pending' AND repeat_of IS NOT NULL;
