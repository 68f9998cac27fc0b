-- PostgreSQL: reference change numbers from a sequence.
--
-- 0005 took each number by updating the one counter row. Inside a
-- transaction every update leaves a version of that row that cannot be
-- pruned until the transaction ends, and each later lock or update of the
-- row walks all of them: a request that moves 50 units paid for about
-- 1,300 row versions, and a large import for millions.
--
-- The counter row stays, as a lock only (`reference_lock`, never
-- updated): each writing statement still locks it first, before its own
-- rows, and holds it to its commit, so writers of cached rows still run
-- one at a time and in the same lock order. A number is taken from
-- `reference_seq` while that lock is held, so it is above every number
-- already committed, and a reader paging "after N" never passes a number
-- that commits later. A writer that rolls back leaves a gap, which a
-- reader paging "after N" skips like any other.
CREATE SEQUENCE reference_seq AS BIGINT MINVALUE 0;
SELECT setval('reference_seq', seq, true) FROM reference_clock;

ALTER TABLE reference_clock RENAME TO reference_lock;
ALTER TABLE reference_lock DROP COLUMN seq;
ALTER TABLE reference_lock RENAME CONSTRAINT u__reference_clock__id TO u__reference_lock__id;

-- The site-wide counter as before: the last number taken.
CREATE VIEW reference_clock AS
    SELECT CAST(1 AS BIGINT) AS id, last_value AS seq FROM reference_seq;

CREATE OR REPLACE FUNCTION reference_clock_lock() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM reference_lock WHERE id = 1 FOR NO KEY UPDATE;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION reference_take_seq() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.ref_seq := nextval('reference_seq');
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION grn_lines_take_seq() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE grns SET ref_seq = nextval('reference_seq') WHERE grn = NEW.grn;
    RETURN NULL;
END
$$;

-- Receipts: the primary key's index leads with the key. A sync request
-- looks its keys up in one statement (`key = ANY (…)` within the device's
-- scope). Led by the scope, the index served that only as well as the
-- planner's statistics knew the device: for a device new since the last
-- ANALYZE the planner expects it to hold no receipts, reads all of them by
-- the scope and filters the keys, and keeps doing so while the device's
-- receipts grow until the table is analysed again. Led by the key, each
-- key is one index search whatever the statistics say. The constraint
-- keeps its name, which names its columns for the ledger's refusals.
ALTER TABLE receipts DROP CONSTRAINT u__receipts__scope__key;
ALTER TABLE receipts ADD CONSTRAINT u__receipts__scope__key PRIMARY KEY (key, scope);
