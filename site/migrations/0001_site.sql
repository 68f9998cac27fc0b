-- The site itself: one row per setting the site keeps about itself.
CREATE TABLE site_meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT;
