-- A portal reading a standing pallet reads each tag many times a second,
-- and every read after the first within the duplicate window is a repeat
-- the ledger keeps only as a count on the read it repeats. Each repeat was
-- a queue row of its own (its raw body, five index entries, a forward
-- and a compaction later): in the site-load bench 1,960 of every 2,100
-- portal reads, and most of the single writer's time.
--
-- Now a repeat of a read whose repeat is still waiting to be forwarded is
-- folded into that waiting row (its number and its last capture instant)
-- and leaves only this: its identity (the same digest as
-- `listener_seen`'s), so a resend is recognised and counts nothing, and
-- what the rate rules rebuilt on start spend (its terminal, kind, subject
-- and capture instant). Rows go once their capture instant is past the
-- queue rows' horizon, as a forwarded row does.
CREATE TABLE listener_repeat (
    occurred_at   INTEGER NOT NULL,
    digest        BLOB    NOT NULL CHECK (length(digest) = 8),
    device_serial TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    subject       TEXT    NOT NULL,
    PRIMARY KEY (occurred_at, digest)
) STRICT, WITHOUT ROWID;

-- The last capture instant folded into a waiting repeat row (NULL: only
-- its own), forwarded as the repeat's capture instant.
ALTER TABLE listener_queue ADD COLUMN last_repeat_at INTEGER;

-- A write finds the waiting repeat row of the read it repeats.
CREATE INDEX listener_queue_waiting_repeat ON listener_queue (repeat_of)
    WHERE state = 'pending' AND repeat_of IS NOT NULL;
