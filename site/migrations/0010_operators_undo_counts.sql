-- Operators as reference data, undo in every mode, counts of one bin and
-- cancelled counts.

-- Operators: the badge an `open_session` names and the person's name,
-- cached by handhelds like bins (so a session can show whose it is).
-- Once any row exists, an unknown badge is refused `unknown_operator`.
CREATE TABLE operators (
    badge    TEXT PRIMARY KEY NOT NULL,
    name     TEXT NOT NULL,
    ref_seq  INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX operators_by_ref_seq ON operators (ref_seq);
CREATE TRIGGER operators_ref_insert AFTER INSERT ON operators BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE operators SET ref_seq = (SELECT seq FROM reference_clock) WHERE badge = NEW.badge;
END;
CREATE TRIGGER operators_ref_update AFTER UPDATE OF name ON operators BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE operators SET ref_seq = (SELECT seq FROM reference_clock) WHERE badge = NEW.badge;
END;

-- Undoing the verify that completed a manifest puts it back in the state
-- it was verified from.
ALTER TABLE manifests ADD COLUMN verified_from TEXT
    CHECK (verified_from IN ('draft', 'packing', 'dispatched'));

-- How many live scans counted each tag, so undoing one of two scans of a
-- tag leaves it counted and undoing the last one does not.
ALTER TABLE count_seen ADD COLUMN scans INTEGER NOT NULL DEFAULT 1 CHECK (scans >= 1);

-- A count of one bin (`bin` set) beside counts of a whole zone (`bin`
-- null): one open count per place, and a zone's count never open beside
-- a count of one of its bins (the ledger checks that before it opens one).
ALTER TABLE counts ADD COLUMN bin TEXT;
DROP INDEX counts_one_open_per_zone;
CREATE UNIQUE INDEX counts_one_open_per_place ON counts (location, zone, coalesce(bin, ''))
    WHERE state = 'open';

-- A count cancelled (`count cancel`): closed, and never approved. SQLite
-- cannot change the state's CHECK without rebuilding the table that
-- count_expected and count_seen reference, so a cancelled count is a
-- closed one with `cancelled_at` set; the ledger reads it as `cancelled`.
ALTER TABLE counts ADD COLUMN cancelled_at INTEGER;
DROP TRIGGER counts_ref_update;
CREATE TRIGGER counts_ref_update AFTER UPDATE OF state, cancelled_at ON counts BEGIN
    UPDATE reference_clock SET seq = seq + 1;
    UPDATE counts SET ref_seq = (SELECT seq FROM reference_clock) WHERE count_no = NEW.count_no;
END;
