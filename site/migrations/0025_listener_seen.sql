-- What the terminal listener keeps of a record once it is behind it. A
-- record's queue row held its raw body for 7 days after the ledger took
-- it, so that a resend was recognised: some 500 bytes a read, and a
-- served record of some 170 more for an hour, a gigabyte an hour at a
-- busy portal. Now the row goes once the record is forwarded and past
-- the stale horizon, and only its identity stays here, for a week of
-- capture time: 8 bytes of a digest of its terminal and the terminal's
-- own identity of the record, under its capture instant (a resend
-- carries the same). Records arrive in about the order they are
-- captured, so the table grows at its right edge in full pages and its
-- oldest rows go as one range. A repeat keeps no identity: the ledger
-- keeps it only as its read's count.
CREATE TABLE listener_seen (
    occurred_at INTEGER NOT NULL,
    digest      BLOB    NOT NULL CHECK (length(digest) = 8),
    PRIMARY KEY (occurred_at, digest)
) STRICT, WITHOUT ROWID;

-- The prune pass finds forwarded rows, repeats among them, by capture
-- instant: those past the horizon at one end, those captured too far
-- ahead (clock skew) at the other.
DROP INDEX listener_queue_done;
DROP INDEX listener_queue_repeats_done;
CREATE INDEX listener_queue_forwarded ON listener_queue (occurred_at) WHERE state = 'done';
