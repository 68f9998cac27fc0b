-- Repeat reads folded into the record they repeat. A portal reads each tag
-- of a standing pallet several times a second; the listener's duplicate
-- rule (same terminal and tag or person within 5 s of an accepted read)
-- marks all but the first, and keeping each as a terminal event of its own
-- (its raw JSON, its claimed key) cost over a kilobyte a read. Now:
--
-- * the listener counts an accepted record's repeats on its queue row, in
--   the transaction that writes each repeat, and a repeat's row names the
--   record it repeats and its number among them;
-- * the ledger keeps, per accepted terminal event, how many repeats it has
--   taken and the last one's capture instant: an absolute count folded in
--   with the larger value, so a resent batch changes nothing. A repeat
--   keeps no raw body, no receipt and no row of its own.
-- * the listener deletes a forwarded repeat's row once a resend of its
--   frame would be judged stale, instead of keeping it 7 days.

ALTER TABLE listener_queue ADD COLUMN repeats INTEGER NOT NULL DEFAULT 0;
ALTER TABLE listener_queue ADD COLUMN repeat_of TEXT;
ALTER TABLE listener_queue ADD COLUMN repeat_number INTEGER;

-- The prune pass finds forwarded repeats without walking the done rows
-- kept for their 7 days.
CREATE INDEX listener_queue_repeats_done ON listener_queue (occurred_at)
    WHERE state = 'done' AND rule_outcome = 'duplicate';

-- One row per accepted terminal event that has had repeats. The event
-- itself stays append-only; these two figures only grow.
CREATE TABLE terminal_repeats (
    key            TEXT    PRIMARY KEY NOT NULL REFERENCES terminal_events (key),
    repeats        INTEGER NOT NULL CHECK (repeats > 0),
    last_repeat_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TRIGGER terminal_repeats_only_grow BEFORE UPDATE ON terminal_repeats
    WHEN NEW.key <> OLD.key OR NEW.repeats < OLD.repeats OR NEW.last_repeat_at < OLD.last_repeat_at
BEGIN
    SELECT RAISE(ABORT, 'a terminal event''s repeats only grow');
END;
CREATE TRIGGER terminal_repeats_refuse_delete BEFORE DELETE ON terminal_repeats
BEGIN
    SELECT RAISE(ABORT, 'a terminal event''s repeats only grow');
END;
