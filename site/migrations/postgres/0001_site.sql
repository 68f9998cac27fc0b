-- PostgreSQL twin of ../0001_site.sql: the same tables, columns, defaults,
-- checks, keys, indexes and triggers, so the same application SQL runs on
-- both. Every unique constraint, unique index and primary key is named
-- u__<table>__<column>[__<column>...], columns in index order: the name
-- spells the column list SQLite puts in "UNIQUE constraint failed: ...".
-- Text columns compare and sort by code point (COLLATE "C"), as SQLite's
-- BINARY collation does, whatever the database's default collation.

-- The site itself: one row per setting the site keeps about itself.
CREATE TABLE site_meta (
    key   TEXT COLLATE "C" NOT NULL,
    value TEXT COLLATE "C" NOT NULL,
    CONSTRAINT u__site_meta__key PRIMARY KEY (key)
);
