-- The site's status counts the listener queue's dead letters on every
-- poll. Counting them by state scanned every row (at a portal's rate,
-- minutes of forwarded reads: millions); with this index the count reads
-- only the dead rows' entries, as the pending count reads the pending
-- index.
CREATE INDEX listener_queue_dead ON listener_queue (seq) WHERE state = 'dead';
