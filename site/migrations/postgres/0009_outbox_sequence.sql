-- PostgreSQL: the central outbox's seqs from a sequence, as 0008 did for
-- reference change numbers and for the same reason: each seq taken by
-- updating the one clock row left a version of it that every later hop of
-- the transaction walked.
--
-- The clock row stays, as a lock only (`central_outbox_lock`, never
-- updated): a hop's trigger locks it before it takes a seq and holds it to
-- its commit, so seqs still follow commit order and a forwarder reading
-- pending rows by seq never passes one that commits later. The backlog
-- enqueued at start takes the same lock first (central/outbox.rs).
CREATE SEQUENCE central_outbox_seq AS BIGINT MINVALUE 0;
SELECT setval('central_outbox_seq', seq, true) FROM central_outbox_clock;

ALTER TABLE central_outbox_clock RENAME TO central_outbox_lock;
ALTER TABLE central_outbox_lock DROP COLUMN seq;
ALTER TABLE central_outbox_lock RENAME CONSTRAINT u__central_outbox_clock__id TO u__central_outbox_lock__id;

-- The outbox's clock as before: the last seq taken.
CREATE VIEW central_outbox_clock AS
    SELECT CAST(1 AS BIGINT) AS id, last_value AS seq FROM central_outbox_seq;

CREATE OR REPLACE FUNCTION hops_central_outbox() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM central_forwarding) THEN
        PERFORM 1 FROM central_outbox_lock WHERE id = 1 FOR NO KEY UPDATE;
        INSERT INTO central_outbox (seq, hop_id)
            VALUES (nextval('central_outbox_seq'), NEW.hop_id);
    END IF;
    RETURN NULL;
END
$$;
