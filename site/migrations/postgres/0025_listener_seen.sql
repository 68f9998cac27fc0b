-- PostgreSQL twin of ../0025_listener_seen.sql: what the terminal
-- listener keeps of a record once its queue row is gone (forwarded and
-- past the stale horizon), its identity for a week of capture time. The
-- listener keeps its queue in the site's own SQLite file whichever engine
-- holds the ledger; the table is here so both schemas stay alike.
CREATE TABLE listener_seen (
    occurred_at BIGINT NOT NULL,
    digest      BYTEA  NOT NULL CHECK (length(digest) = 8),
    CONSTRAINT u__listener_seen__occurred_at__digest PRIMARY KEY (occurred_at, digest)
);

DROP INDEX listener_queue_done;
DROP INDEX listener_queue_repeats_done;
CREATE INDEX listener_queue_forwarded ON listener_queue (occurred_at) WHERE state = 'done';
