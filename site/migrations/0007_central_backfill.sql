-- Past one site, the backlog and the last failure, kept in a one-row table
-- of the forwarder's own that no hop's transaction touches (the `hops`
-- trigger writes the outbox clock and reads `central_forwarding`; writing
-- either here would make handhelds' syncs conflict with the forwarder on
-- PostgreSQL).
--
-- pruned_hop_id: a site that starts forwarding sends the hops it appended
-- before (its whole history, or the hops of a stretch with forwarding
-- off), enqueued by `serve` at start for every hop without an outbox row.
-- Done rows are pruned after their retention, so "without a row" alone
-- would send those hops again: this is the highest hop_id whose done row
-- was pruned. Every hop at or below it had its row (pruning runs only
-- while forwarding is on, when every hop has one), and the backlog is
-- looked for above it.
--
-- last_error, last_error_at: why the last delivery to the central failed
-- (an unreachable central, a certificate it does not trust, a refusing
-- answer) and when; cleared by the next delivery that gets an answer, and
-- at each start.
CREATE TABLE central_forwarder_state (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    pruned_hop_id  INTEGER NOT NULL CHECK (pruned_hop_id >= 0),
    last_error     TEXT,
    last_error_at  INTEGER,
    CHECK ((last_error IS NULL) = (last_error_at IS NULL))
) STRICT;
INSERT INTO central_forwarder_state (id, pruned_hop_id) VALUES (1, 0);
