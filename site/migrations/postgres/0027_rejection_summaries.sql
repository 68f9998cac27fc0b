-- PostgreSQL twin of ../0027_rejection_summaries.sql: what the site's
-- status, decisions and metrics show of rejected items, kept as items are
-- written, so those pages read a few rows instead of counting every
-- rejected receipt.
CREATE TABLE rejection_summary (
    device_id         TEXT COLLATE "C" NOT NULL,
    reason            TEXT COLLATE "C" NOT NULL,
    rejected          BIGINT NOT NULL CHECK (rejected >= 0),
    unsettled         BIGINT NOT NULL CHECK (unsettled >= 0 AND unsettled <= rejected),
    last_received_at  BIGINT NOT NULL,
    CONSTRAINT u__rejection_summary__device_id__reason PRIMARY KEY (device_id, reason)
);

CREATE TABLE rejection_minutes (
    device_id  TEXT COLLATE "C" NOT NULL,
    minute     BIGINT NOT NULL,
    rejected   BIGINT NOT NULL CHECK (rejected > 0),
    CONSTRAINT u__rejection_minutes__device_id__minute PRIMARY KEY (device_id, minute)
);

INSERT INTO rejection_summary (device_id, reason, rejected, unsettled, last_received_at)
SELECT r.scope, coalesce(json_extract(r.response, '$.reason'), ''), count(*),
       sum(CASE WHEN EXISTS (SELECT 1 FROM decision_log d
                             WHERE d.decision_id = 'item:' || r.scope || ':' || r.key)
                THEN 0 ELSE 1 END),
       max(r.received_at)
FROM receipts r
WHERE r.state = 'final'
  AND CASE WHEN json_valid(r.response) THEN json_extract(r.response, '$.outcome') END = 'rejected'
GROUP BY r.scope, coalesce(json_extract(r.response, '$.reason'), '');

INSERT INTO rejection_minutes (device_id, minute, rejected)
SELECT r.scope, r.received_at / 60000, count(*)
FROM receipts r
WHERE r.state = 'final'
  AND CASE WHEN json_valid(r.response) THEN json_extract(r.response, '$.outcome') END = 'rejected'
  AND r.received_at >= CAST(extract(epoch FROM now()) * 1000 AS BIGINT) - 10 * 60000
GROUP BY r.scope, r.received_at / 60000;
