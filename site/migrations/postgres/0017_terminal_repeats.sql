-- PostgreSQL twin of ../0017_terminal_repeats.sql: repeat reads folded into
-- the record they repeat. The listener counts an accepted record's repeats
-- on its queue row and names, on each repeat's row, the record it repeats
-- and its number; the ledger keeps per accepted terminal event how many
-- repeats it has taken and the last one's capture instant, folded in with
-- the larger value so a resent batch changes nothing. A repeat keeps no raw
-- body, no receipt and no row of its own; the listener deletes a forwarded
-- repeat's row once a resend of its frame would be judged stale.

ALTER TABLE listener_queue ADD COLUMN repeats BIGINT NOT NULL DEFAULT 0;
ALTER TABLE listener_queue ADD COLUMN repeat_of TEXT COLLATE "C";
ALTER TABLE listener_queue ADD COLUMN repeat_number BIGINT;

CREATE INDEX listener_queue_repeats_done ON listener_queue (occurred_at)
    WHERE state = 'done' AND rule_outcome = 'duplicate';

CREATE TABLE terminal_repeats (
    key            TEXT COLLATE "C" NOT NULL REFERENCES terminal_events (key),
    repeats        BIGINT NOT NULL CHECK (repeats > 0),
    last_repeat_at BIGINT NOT NULL,
    CONSTRAINT u__terminal_repeats__key PRIMARY KEY (key)
);
CREATE TRIGGER terminal_repeats_only_grow BEFORE UPDATE ON terminal_repeats
    FOR EACH ROW
    WHEN (NEW.key <> OLD.key OR NEW.repeats < OLD.repeats OR NEW.last_repeat_at < OLD.last_repeat_at)
    EXECUTE FUNCTION refuse_change('a terminal event''s repeats only grow');
CREATE TRIGGER terminal_repeats_refuse_delete BEFORE DELETE ON terminal_repeats
    FOR EACH ROW EXECUTE FUNCTION refuse_change('a terminal event''s repeats only grow');
CREATE TRIGGER terminal_repeats_refuse_truncate BEFORE TRUNCATE ON terminal_repeats
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('a terminal event''s repeats only grow');
