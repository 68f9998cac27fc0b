-- PostgreSQL twin of ../0007_central_backfill.sql. Past one site, the
-- backlog and the last failure.

-- The backlog: a site that starts forwarding sends the hops it appended before
-- (its whole history, or the hops of a stretch with forwarding off),
-- enqueued by `serve` at start for every hop without an outbox row. Done
-- rows are pruned after their retention, so "without a row" alone would
-- send those hops again: the clock row keeps the highest hop_id whose done
-- row was pruned. Every hop at or below it had its row (pruning runs only
-- while forwarding is on, when every hop has one), and the backlog is
-- looked for above it.
ALTER TABLE central_outbox_clock
    ADD COLUMN pruned_hop_id BIGINT NOT NULL DEFAULT 0 CHECK (pruned_hop_id >= 0);

-- Why the last delivery to the central failed (an unreachable central, a
-- certificate it does not trust, a refusing answer) and when; cleared by
-- the next delivery that gets an answer. Kept with the forwarding it
-- belongs to, so a start with another central begins without it.
ALTER TABLE central_forwarding ADD COLUMN last_error TEXT COLLATE "C";
ALTER TABLE central_forwarding ADD COLUMN last_error_at BIGINT;
