-- What a revoked device held: the SHA-256 of the token it had when it was
-- revoked (its rescue file is still signed with it: retiring a device is
-- revoke, then import its file; NULL for a device revoked before this
-- migration, whose digest the site no longer has), and the queue depth of
-- its last heartbeat before revoking forgot its heartbeats (NULL when it
-- never sent one).
ALTER TABLE device_revocations ADD COLUMN token_sha256 TEXT;
ALTER TABLE device_revocations ADD COLUMN queue_depth INTEGER;

-- Every rescue file imported: whose, when it was written (the device's
-- clock) and imported (the site's), and what became of its items (items =
-- applied + rejected + replayed; buffered counts among rejected: items
-- that wait for an earlier client_seq the file did not hold).
CREATE TABLE rescues (
    rescue_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    device_id    TEXT NOT NULL REFERENCES devices (device_id),
    imported_at  INTEGER NOT NULL,
    exported_at  INTEGER NOT NULL,
    items        INTEGER NOT NULL,
    applied      INTEGER NOT NULL,
    rejected     INTEGER NOT NULL,
    replayed     INTEGER NOT NULL,
    buffered     INTEGER NOT NULL
) STRICT;
CREATE INDEX rescues_by_device ON rescues (device_id, imported_at);
