-- An import's apply turns write reference rows without the reference lock.
--
-- Every writer of cached rows locks `reference_lock` (0008) and holds it to
-- its commit, so change numbers commit in the order they are taken and a
-- handheld paging "after N" never passes a number that commits later. An
-- import's apply turn took it too, at its first bin, and a sync that moved
-- a unit then waited for the rest of the turn: over a 1,000,000-bin import
-- the syncs' p99 went from 3 to 37 ms.
--
-- While an import applies, no handheld reads past the change number of its
-- flip (`imports.watermark`): the numbers its turns take, and the syncs'
-- meanwhile, are all above it and hidden until it ends. So the order in
-- which they commit matters only at the end, and only there is the lock
-- needed: the turn that ends the import (deletes its `imports` row, which
-- lifts the cap) takes the lock first, so every number taken before it has
-- committed, and every number taken after it is above all of them.
--
-- A turn that sets `stockhop.import_applying` to `on` (SET LOCAL: that
-- transaction only) writes without the lock; its numbers still come from
-- `reference_seq`, so they stay unique. Units turns never set it: a units
-- row that moves a unit books a hop, whose id needs the lock (0011), and a
-- turn that took the lock after the unit rows it holds could deadlock with
-- a sync that holds the lock and wants one of them.
CREATE OR REPLACE FUNCTION reference_clock_lock() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('stockhop.import_applying', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM 1 FROM reference_lock WHERE id = 1 FOR NO KEY UPDATE;
    RETURN NULL;
END
$$;
