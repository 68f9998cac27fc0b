-- The decisions a person settled on the site's view (or an operator on a
-- handheld, by acknowledging the item it answers): the workbench's audit
-- log. A decision is settled once; the open list is everything waiting
-- without a row here. Append-only like the hops.
CREATE TABLE decision_log (
    decision_id  TEXT COLLATE "C" NOT NULL,
    kind         TEXT NOT NULL,
    action       TEXT NOT NULL
                 CHECK (action IN ('dismiss', 'correct', 'acknowledge', 'rescan')),
    -- The admin's name, or `device:ID` for a handheld's acknowledgement.
    settled_by   TEXT NOT NULL,
    note         TEXT NOT NULL,
    settled_at   BIGINT NOT NULL,
    -- The hops the settlement posted, as a JSON array of ids.
    hop_ids      TEXT NOT NULL,
    -- The decision in words as it stood when it was settled.
    summary      TEXT NOT NULL,
    CONSTRAINT u__decision_log__decision_id PRIMARY KEY (decision_id)
);
CREATE INDEX decision_log_by_time ON decision_log (settled_at);

CREATE TRIGGER decision_log_refuse_update BEFORE UPDATE ON decision_log
    FOR EACH ROW EXECUTE FUNCTION refuse_change('the decision log is append-only');
CREATE TRIGGER decision_log_refuse_delete BEFORE DELETE ON decision_log
    FOR EACH ROW EXECUTE FUNCTION refuse_change('the decision log is append-only');
CREATE TRIGGER decision_log_refuse_truncate BEFORE TRUNCATE ON decision_log
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('the decision log is append-only');
