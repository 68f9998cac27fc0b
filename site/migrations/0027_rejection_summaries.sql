-- What the site's status, decisions and metrics show of rejected items,
-- kept as items are written (in the transaction that writes the receipt
-- or settles the decision), so those pages read a few rows instead of
-- counting every rejected receipt: a handheld scanning unknown tags all
-- shift leaves millions.
--
-- One row a device and reason: rejected items in all, those not settled
-- in the decision log yet (the correction list's total), and the newest
-- one's receipt instant. `reason` is '' for an answer that names none.
CREATE TABLE rejection_summary (
    device_id         TEXT NOT NULL,
    reason            TEXT NOT NULL,
    rejected          INTEGER NOT NULL CHECK (rejected >= 0),
    unsettled         INTEGER NOT NULL CHECK (unsettled >= 0 AND unsettled <= rejected),
    last_received_at  INTEGER NOT NULL,
    PRIMARY KEY (device_id, reason)
) STRICT;

-- Rejected items a device and minute of receipt (received_at / 60000),
-- for the rate over the last minutes: a device's rows older than the
-- window are deleted as its new ones are written.
CREATE TABLE rejection_minutes (
    device_id  TEXT NOT NULL,
    minute     INTEGER NOT NULL,
    rejected   INTEGER NOT NULL CHECK (rejected > 0),
    PRIMARY KEY (device_id, minute)
) STRICT;

-- The summaries of the receipts already held: the correction list's rows
-- (final answers whose outcome is `rejected`, the partial index
-- `receipts_rejected`), settled or not.
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

-- The last ten minutes' (the longest window read, twice over: the rate's
-- window is five) by the machine's clock.
INSERT INTO rejection_minutes (device_id, minute, rejected)
SELECT r.scope, r.received_at / 60000, count(*)
FROM receipts r
WHERE r.state = 'final'
  AND CASE WHEN json_valid(r.response) THEN json_extract(r.response, '$.outcome') END = 'rejected'
  AND r.received_at >= CAST(strftime('%s', 'now') AS INTEGER) * 1000 - 10 * 60000
GROUP BY r.scope, r.received_at / 60000;
