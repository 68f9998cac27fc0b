-- Terminal records the ledger keeps failing (5xx) are set aside so the
-- records behind them flow: each queue row counts the attempts the ledger
-- failed it with and keeps the last failure. A row with `set_aside_at` is
-- still pending (kept, never dropped) but is left out of the FIFO drain and
-- tried alone again from `next_attempt_at`, at the slower set-aside cadence.
ALTER TABLE listener_queue ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE listener_queue ADD COLUMN last_error TEXT;
ALTER TABLE listener_queue ADD COLUMN last_attempt_at INTEGER;
ALTER TABLE listener_queue ADD COLUMN set_aside_at INTEGER;
ALTER TABLE listener_queue ADD COLUMN next_attempt_at INTEGER;

CREATE INDEX listener_queue_set_aside ON listener_queue (next_attempt_at)
    WHERE state = 'pending' AND set_aside_at IS NOT NULL;
