-- A restore the central understands. `stockhop-site restore` puts a backup
-- in place and starts a new outbox epoch: the site's stream to its central
-- goes on after what the central holds, not from the backup's seq. The
-- site keeps its epoch (0: never restored); the central keeps each site's
-- epoch, when it began and the seq it began after, for the company's view.
ALTER TABLE central_forwarder_state ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0 CHECK (epoch >= 0);

ALTER TABLE central_sites ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0 CHECK (epoch >= 0);
ALTER TABLE central_sites ADD COLUMN epoch_started_at INTEGER;
ALTER TABLE central_sites ADD COLUMN epoch_after_seq INTEGER;
