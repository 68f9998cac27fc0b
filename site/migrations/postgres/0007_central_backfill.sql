-- PostgreSQL twin of ../0007_central_backfill.sql. Past one site, the
-- backlog: a site that starts forwarding sends the hops it appended before
-- (its whole history, or the hops of a stretch with forwarding off),
-- enqueued by `serve` at start for every hop without an outbox row. Done
-- rows are pruned after their retention, so "without a row" alone would
-- send those hops again: the clock row keeps the highest hop_id whose done
-- row was pruned. Every hop at or below it had its row (pruning runs only
-- while forwarding is on, when every hop has one), and the backlog is
-- looked for above it.
ALTER TABLE central_outbox_clock
    ADD COLUMN pruned_hop_id BIGINT NOT NULL DEFAULT 0 CHECK (pruned_hop_id >= 0);
