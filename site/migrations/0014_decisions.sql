-- The decisions a person settled on the site's view (or an operator on a
-- handheld, by acknowledging the item it answers): the workbench's audit
-- log. A decision is settled once; the open list is everything waiting
-- without a row here. Append-only like the hops.
CREATE TABLE decision_log (
    decision_id  TEXT PRIMARY KEY NOT NULL,
    kind         TEXT NOT NULL,
    action       TEXT NOT NULL
                 CHECK (action IN ('dismiss', 'correct', 'acknowledge', 'rescan')),
    -- The admin's name, or `device:ID` for a handheld's acknowledgement.
    settled_by   TEXT NOT NULL,
    note         TEXT NOT NULL,
    settled_at   INTEGER NOT NULL,
    -- The hops the settlement posted, as a JSON array of ids.
    hop_ids      TEXT NOT NULL,
    -- The decision in words as it stood when it was settled.
    summary      TEXT NOT NULL
) STRICT;
CREATE INDEX decision_log_by_time ON decision_log (settled_at);

CREATE TRIGGER decision_log_refuse_update BEFORE UPDATE ON decision_log
BEGIN
    SELECT RAISE(ABORT, 'the decision log is append-only');
END;
CREATE TRIGGER decision_log_refuse_delete BEFORE DELETE ON decision_log
BEGIN
    SELECT RAISE(ABORT, 'the decision log is append-only');
END;

-- The alert conditions firing now (the webhook heard `firing` for each),
-- and the alerts waiting to be delivered, in order. A condition's start
-- and end are queued in the transaction that records them, so a restart
-- neither repeats nor loses one.
CREATE TABLE alert_state (
    condition_key  TEXT PRIMARY KEY NOT NULL,
    name           TEXT NOT NULL,
    priority       TEXT NOT NULL CHECK (priority IN ('P1', 'P2', 'P3')),
    device_id      TEXT,
    since          INTEGER NOT NULL,
    summary        TEXT NOT NULL
) STRICT;

CREATE TABLE alert_outbox (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The alert as the webhook gets it (JSON).
    alert      TEXT NOT NULL,
    state      TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'dead')),
    queued_at  INTEGER NOT NULL,
    sent_at    INTEGER,
    attempts   INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
) STRICT;
CREATE INDEX alert_outbox_pending ON alert_outbox (seq) WHERE state = 'pending';
CREATE INDEX alert_outbox_sent ON alert_outbox (sent_at) WHERE state = 'sent';
