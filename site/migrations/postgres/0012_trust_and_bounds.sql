-- Each site its own secret at a central: the HMAC key a site signs its
-- batches with, kept as issued because verifying an HMAC needs the key
-- itself (the database is as secret as the key file it replaces). A site
-- without a row here may still sign with the central's shared secret.
CREATE TABLE central_site_secrets (
    site_id   TEXT COLLATE "C" NOT NULL,
    secret    TEXT NOT NULL CHECK (length(secret) >= 32),
    added_at  BIGINT NOT NULL,
    CONSTRAINT u__central_site_secrets__site_id PRIMARY KEY (site_id)
);

-- The terminal listener's known peers, per port: addresses that have had
-- a valid record or request written, which keep the slots reserved for
-- known terminals across a restart. At most MAX_KNOWN_PEERS a port.
CREATE TABLE listener_known_peers (
    port      TEXT COLLATE "C" NOT NULL CHECK (port IN ('http', 'tcp')),
    addr      TEXT COLLATE "C" NOT NULL,
    first_at  BIGINT NOT NULL,
    CONSTRAINT u__listener_known_peers__port__addr PRIMARY KEY (port, addr)
);
