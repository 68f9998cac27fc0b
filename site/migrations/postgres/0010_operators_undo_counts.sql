-- PostgreSQL twin of ../0010_operators_undo_counts.sql. Operators as
-- reference data, undo in every mode, counts of one bin and cancelled
-- counts.

-- Operators: the badge an `open_session` names and the person's name,
-- cached by handhelds like bins (so a session can show whose it is).
-- Once any row exists, an unknown badge is refused `unknown_operator`.
CREATE TABLE operators (
    badge    TEXT COLLATE "C" NOT NULL,
    name     TEXT COLLATE "C" NOT NULL,
    ref_seq  BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT u__operators__badge PRIMARY KEY (badge)
);
CREATE INDEX operators_by_ref_seq ON operators (ref_seq);
CREATE TRIGGER operators_ref_lock BEFORE INSERT OR UPDATE OF name ON operators
    FOR EACH STATEMENT EXECUTE FUNCTION reference_clock_lock();
CREATE TRIGGER operators_ref_insert BEFORE INSERT ON operators
    FOR EACH ROW EXECUTE FUNCTION reference_take_seq();
CREATE TRIGGER operators_ref_update BEFORE UPDATE OF name ON operators
    FOR EACH ROW EXECUTE FUNCTION reference_take_seq();

-- Undoing the verify that completed a manifest puts it back in the state
-- it was verified from.
ALTER TABLE manifests ADD COLUMN verified_from TEXT COLLATE "C"
    CHECK (verified_from IN ('draft', 'packing', 'dispatched'));

-- How many live scans counted each tag, so undoing one of two scans of a
-- tag leaves it counted and undoing the last one does not.
ALTER TABLE count_seen ADD COLUMN scans BIGINT NOT NULL DEFAULT 1 CHECK (scans >= 1);

-- A count of one bin (`bin` set) beside counts of a whole zone (`bin`
-- null): one open count per place, and a zone's count never open beside
-- a count of one of its bins (the ledger checks that before it opens one).
ALTER TABLE counts ADD COLUMN bin TEXT COLLATE "C";
DROP INDEX u__counts__location__zone;
CREATE UNIQUE INDEX u__counts__location__zone__bin ON counts (location, zone, (coalesce(bin, '')))
    WHERE state = 'open';

-- A count cancelled (`count cancel`): closed, and never approved; kept as
-- SQLite keeps it (a closed count with `cancelled_at` set, which the
-- ledger reads as `cancelled`), so both engines hold the same rows.
ALTER TABLE counts ADD COLUMN cancelled_at BIGINT;
DROP TRIGGER counts_ref_lock ON counts;
DROP TRIGGER counts_ref_update ON counts;
CREATE TRIGGER counts_ref_lock BEFORE INSERT OR UPDATE OF state, cancelled_at ON counts
    FOR EACH STATEMENT EXECUTE FUNCTION reference_clock_lock();
CREATE TRIGGER counts_ref_update BEFORE UPDATE OF state, cancelled_at ON counts
    FOR EACH ROW EXECUTE FUNCTION reference_take_seq();
