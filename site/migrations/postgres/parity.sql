-- One scripted sequence, run by parity.sh on a fresh SQLite database with
-- ../*.sql and on a fresh PostgreSQL database with ./*.sql. Both runs must
-- print the same rows and fail the same statements with the same errors.
-- Only SQL that reads the same on both belongs here. Each statement runs
-- on its own (autocommit), so a refused one leaves the rest to run.
-- Identity ids are not printed: a refused insert uses up one on
-- PostgreSQL and none on SQLite, so ids after it differ. Change numbers
-- are printed by their order, not their values, for the same reason
-- (PostgreSQL takes them from a sequence, migration 0008); the clock is
-- checked to be at or past every number taken.

-- Change numbers: each insert and each write naming a watched column takes
-- a higher one, even when the value stays; other columns take none.
INSERT INTO bins (bin, zone, location) VALUES ('B1', 'Z1', 'L1'), ('B2', 'Z1', 'L1');
UPDATE bins SET zone = zone WHERE bin = 'B1';
UPDATE bins SET ref_seq = 99 WHERE bin = 'B2';
UPDATE bins SET location = 'L2' WHERE bin = 'nowhere';
INSERT INTO units (epc, code, bin, version, first_seen_at) VALUES ('E1', NULL, NULL, 0, 10);
INSERT INTO units (epc, code, bin, version, first_seen_at, ref_seq) VALUES (NULL, 'C2', 'B1', 0, 11, 500);
UPDATE units SET first_seen_at = 12 WHERE unit_id = 2;
UPDATE units SET bin = 'B1', state = 'in_stock', version = 1 WHERE unit_id = 1;
UPDATE units SET sku = 'S1', version = 2 WHERE unit_id = 1;
INSERT INTO grns (grn, qc) VALUES ('G1', 'accepted');
INSERT INTO grn_lines (grn, sku, expected) VALUES ('G1', 'S1', 2);
INSERT INTO grn_lines (grn, sku, expected) VALUES ('G1', 'S2', 1);
UPDATE grn_lines SET received = received + 1 WHERE grn = 'G1' AND sku = 'S1';
UPDATE grns SET state = 'complete' WHERE grn = 'G1' AND state != 'complete';
UPDATE grns SET state = 'complete' WHERE grn = 'G1' AND state != 'complete';
INSERT INTO counts (count_id, location, zone, opened_at) VALUES ('C-tmp', 'L1', 'Z1', 20);
UPDATE counts SET count_id = 'C-000001' WHERE count_no = 1;
-- Refused (one open count per zone): its row takes no number.
INSERT INTO counts (count_id, location, zone, opened_at) VALUES ('C-tmp', 'L1', 'Z1', 21);
UPDATE counts SET state = 'closed', closed_at = 22 WHERE count_id = 'C-000001' AND state = 'open';
INSERT INTO counts (count_id, location, zone, opened_at) VALUES ('C-000002', 'L1', 'Z1', 23);
CREATE TEMP VIEW change_numbers AS
    SELECT 'bin' AS kind, bin AS name, ref_seq FROM bins
    UNION ALL SELECT 'unit', CAST(unit_id AS TEXT), ref_seq FROM units
    UNION ALL SELECT 'grn', grn, ref_seq FROM grns
    UNION ALL SELECT 'count', count_id, ref_seq FROM counts;
-- The numbers set by hand above (99, 500) are not the clock's.
CREATE TEMP VIEW clock_check AS
    SELECT CASE WHEN (SELECT seq FROM reference_clock)
                     >= (SELECT max(ref_seq) FROM change_numbers WHERE ref_seq < 99)
                THEN 'at or past every number' ELSE 'behind' END AS verdict;
SELECT 'clock', verdict FROM clock_check;
SELECT 'bin', bin, zone, location FROM bins ORDER BY bin;
SELECT 'unit', unit_id, epc, code, sku, state, bin, version FROM units ORDER BY unit_id;
SELECT 'grn', grn, qc, state FROM grns ORDER BY grn;
SELECT 'grn_line', grn, sku, expected, received FROM grn_lines ORDER BY grn, sku;
SELECT 'count', count_id, state FROM counts ORDER BY count_no;
SELECT 'numbered', kind, name, dense_rank() OVER (ORDER BY ref_seq) FROM change_numbers
    ORDER BY ref_seq, kind, name;

-- Unique violations: each names its columns (SQLite's message, PostgreSQL's
-- constraint name).
INSERT INTO devices (device_id, profile, token_sha256, added_at) VALUES ('D1', 'fxr90', 'T1', 1);
INSERT INTO devices (device_id, profile, token_sha256, added_at) VALUES ('D1', 'fxr90', 'T2', 1);
INSERT INTO devices (device_id, profile, token_sha256, added_at) VALUES ('D2', 'rfd40', 'T1', 1);
INSERT INTO devices (device_id, profile, token_sha256, added_at) VALUES ('D2', 'rfd40', 'T2', 1);
INSERT INTO sessions (session_id, device_id, state, operator_id) VALUES ('S1', 'D1', 'open', 'O1');
INSERT INTO sessions (session_id, device_id, state, operator_id) VALUES ('S1', 'D2', 'pending', NULL);
INSERT INTO sessions (session_id, device_id, state, operator_id) VALUES ('S2', 'D1', 'open', 'O2');
INSERT INTO sessions (session_id, device_id, state, operator_id) VALUES ('S3', 'D2', 'open', 'O1');
INSERT INTO sessions (session_id, device_id, state, operator_id) VALUES ('S4', 'D1', 'closed', 'O1');
INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash, state, received_at, skew_ms, response)
    VALUES ('D1', 'K1', 'S1', 1, 'scan', 'h', 'final', 100, 0, '{"outcome":"rejected","reason":"stale"}');
INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash, state, received_at, skew_ms)
    VALUES ('D1', 'K1', 'S1', 2, 'scan', 'h', 'buffered', 101, 0);
INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash, state, received_at, skew_ms)
    VALUES ('D1', 'K2', 'S1', 1, 'scan', 'h', 'buffered', 102, 0);
INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash, state, received_at, skew_ms, response)
    VALUES ('D1', 'K3', 'S1', 3, 'scan', 'h', 'final', 103, 0, 'not json');
INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash, state, received_at, skew_ms, response)
    VALUES ('D1', 'K4', 'S1', 4, 'scan', 'h', 'final', 104, 0, '{"outcome":"applied"}');
INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash, state, received_at, skew_ms, response)
    VALUES ('D1', 'K5', NULL, NULL, 'scan', 'h', 'final', 105, 0, '{"outcome":"rejected","reason":{"code":"X"}}');
INSERT INTO seq_voids (session_id, seq, void_key) VALUES ('S1', 5, 'V1');
INSERT INTO seq_voids (session_id, seq, void_key) VALUES ('S1', 5, 'V2');
INSERT INTO units (epc, code, version, first_seen_at) VALUES ('E1', NULL, 0, 30);
INSERT INTO units (epc, code, version, first_seen_at) VALUES (NULL, 'C2', 0, 30);
INSERT INTO hops (device_id, key, command, kind, unit_id, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode)
    VALUES ('D1', 'K1', 'scan', 'putaway', 1, '{}', 1, 1, 1, 0, 'live');
INSERT INTO hops (device_id, key, command, kind, unit_id, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode)
    VALUES ('D1', 'K1', 'scan', 'putaway', 1, '{}', 2, 2, 2, 0, 'live');
INSERT INTO hops (device_id, key, command, kind, unit_id, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode, compensates)
    VALUES ('D1', 'U1', 'undo', 'undo', 1, '{}', 3, 3, 3, 0, 'live', 1);
INSERT INTO hops (device_id, key, command, kind, unit_id, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode, compensates)
    VALUES ('D1', 'U2', 'undo', 'undo', 1, '{}', 4, 4, 4, 0, 'live', 1);
INSERT INTO terminal_events (key, source, device_serial, kind, subject, occurred_at, queued_at, recorded_at, rule_outcome, raw, hop_id)
    VALUES ('TK1', 'framed', 'SN1', 'tag_read', 'E1', 1, 1, 1, 'accepted', 'r', 1);
INSERT INTO terminal_events (key, source, device_serial, kind, subject, occurred_at, queued_at, recorded_at, rule_outcome, raw, hop_id)
    VALUES ('TK1', 'framed', 'SN1', 'tag_read', 'E1', 2, 2, 2, 'accepted', 'r', NULL);
INSERT INTO periods (closed_until, closed_at) VALUES (1000, 1);
INSERT INTO periods (closed_until, closed_at) VALUES (1000, 2);
SELECT 'hop', h.key, c.key FROM hops AS h LEFT JOIN hops AS c ON c.hop_id = h.compensates ORDER BY h.hop_id;

-- The correction list's query, as the site view runs it.
SELECT 'rejected', scope, key, json_extract(response, '$.reason') FROM receipts
    WHERE state = 'final'
      AND CASE WHEN json_valid(response) THEN json_extract(response, '$.outcome') END = 'rejected'
    ORDER BY received_at DESC;

-- Append-only tables refuse every change.
UPDATE hops SET facts = '{"x":1}' WHERE hop_id = 1;
DELETE FROM hops WHERE key = 'U1';
UPDATE terminal_events SET raw = 'x' WHERE key = 'TK1';
DELETE FROM terminal_events WHERE key = 'TK1';
UPDATE periods SET closed_at = 3 WHERE closed_until = 1000;
DELETE FROM periods WHERE closed_until = 1000;
-- A terminal event's repeats are folded in with the larger figures and
-- only grow.
INSERT INTO terminal_repeats (key, repeats, last_repeat_at) VALUES ('TK1', 2, 5);
INSERT INTO terminal_repeats (key, repeats, last_repeat_at) VALUES ('TK1', 1, 9)
    ON CONFLICT (key) DO UPDATE SET
      repeats = CASE WHEN excluded.repeats > terminal_repeats.repeats
                     THEN excluded.repeats ELSE terminal_repeats.repeats END,
      last_repeat_at = CASE WHEN excluded.last_repeat_at > terminal_repeats.last_repeat_at
                            THEN excluded.last_repeat_at ELSE terminal_repeats.last_repeat_at END;
UPDATE terminal_repeats SET repeats = 1 WHERE key = 'TK1';
DELETE FROM terminal_repeats WHERE key = 'TK1';
SELECT 'repeats', key, repeats, last_repeat_at FROM terminal_repeats;
-- Text sorts by code point, as SQLite's BINARY collation does.
INSERT INTO site_meta (key, value) VALUES ('b3', 'x'), ('a9', 'y'), ('B1', 'z'), ('_0', 'w');
SELECT 'meta', key FROM site_meta ORDER BY key;

SELECT 'kept', (SELECT count(*) FROM hops), (SELECT count(*) FROM terminal_events), (SELECT count(*) FROM periods);
SELECT 'clock', verdict FROM clock_check;
SELECT 'numbered', kind, name, dense_rank() OVER (ORDER BY ref_seq) FROM change_numbers
    ORDER BY ref_seq, kind, name;

-- The outbox to a central: a hop takes an outbox row only while forwarding
-- is configured, its seq from the outbox clock (a refused hop takes none);
-- only done rows may be deleted.
INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode)
    VALUES ('D1', 'F0', 'scan', 'putaway', '{}', 5, 5, 5, 0, 'live');
INSERT INTO central_forwarding (id, site_id, central_url, since) VALUES (1, 'SITE', 'http://central', 6);
INSERT INTO central_forwarding (id, site_id, central_url, since) VALUES (1, 'SITE', 'http://other', 6);
INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode)
    VALUES ('D1', 'F1', 'scan', 'putaway', '{}', 6, 6, 6, 0, 'live');
INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode)
    VALUES ('D1', 'F1', 'scan', 'putaway', '{}', 7, 7, 7, 0, 'live');
INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode)
    VALUES ('D1', 'F2', 'scan', 'putaway', '{}', 8, 8, 8, 0, 'live');
DELETE FROM central_outbox WHERE seq = 1;
UPDATE central_outbox SET state = 'done', settled_at = 9 WHERE seq = 1;
DELETE FROM central_outbox WHERE seq = 1;
DELETE FROM central_forwarding;
INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at, recorded_at, device_clock_skew_ms, source_mode)
    VALUES ('D1', 'F3', 'scan', 'putaway', '{}', 9, 9, 9, 0, 'live');
SELECT 'outbox', o.seq, h.key, o.state, o.attempts FROM central_outbox AS o JOIN hops AS h ON h.hop_id = o.hop_id ORDER BY o.seq;
SELECT 'outbox_clock', seq FROM central_outbox_clock;

-- A central: each (site, key) and (site, seq) once; its hops append-only.
INSERT INTO central_sites (site_id, first_seen_at, last_seen_at) VALUES ('SITE', 1, 1);
INSERT INTO central_hops (site_id, key, seq, hop, hop_sha256, received_at) VALUES ('SITE', 'K1', 1, '{}', 'h1', 1);
INSERT INTO central_hops (site_id, key, seq, hop, hop_sha256, received_at) VALUES ('SITE', 'K1', 2, '{}', 'h2', 1);
INSERT INTO central_hops (site_id, key, seq, hop, hop_sha256, received_at) VALUES ('SITE', 'K2', 1, '{}', 'h2', 1);
UPDATE central_hops SET hop = '{"x":1}' WHERE key = 'K1';
DELETE FROM central_hops WHERE key = 'K1';
INSERT INTO central_sites (site_id, first_seen_at, last_seen_at) VALUES ('SITE', 2, 2)
    ON CONFLICT (site_id) DO UPDATE SET last_seen_at = excluded.last_seen_at;
SELECT 'central', s.site_id, s.first_seen_at, s.last_seen_at, h.key, h.seq FROM central_sites AS s JOIN central_hops AS h ON h.site_id = s.site_id ORDER BY h.seq;
