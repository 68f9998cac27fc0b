-- Imports staged in chunks, and made visible by one short transaction.
--
-- An import writes its checked rows into `import_rows` a short
-- transaction at a time (nothing reads them but the import), then flips
-- its `imports` row to 'applying' in one statement: from then on the
-- import is decided, and its rows are merged into the reference tables a
-- short transaction at a time, resumed after a crash by the next import or
-- the next start. An import killed while staging leaves rows no reader
-- sees, swept once its lease (`touched_at`) runs out. While one applies,
-- handhelds' reference pages stop at `watermark` (the change number at the
-- flip), so a handheld takes the whole import at once.
--
-- The hop feed pages hops by hop_id: on SQLite, whose one writer commits a
-- transaction at a time, AUTOINCREMENT ids follow commit order already
-- (PostgreSQL's twin of this migration makes them do so there).
CREATE TABLE imports (
    import_id     INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('staging', 'applying')),
    source        TEXT NOT NULL,
    started_at    INTEGER NOT NULL,
    touched_at    INTEGER NOT NULL,
    row_count     INTEGER NOT NULL DEFAULT 0 CHECK (row_count >= 0),
    changed       INTEGER NOT NULL DEFAULT 0 CHECK (changed >= 0),
    watermark     INTEGER
) STRICT;
-- One import applies at a time.
CREATE UNIQUE INDEX u__imports__state ON imports (state) WHERE state = 'applying';

CREATE TABLE import_rows (
    import_id  INTEGER NOT NULL REFERENCES imports (import_id),
    line       INTEGER NOT NULL,
    fields     TEXT NOT NULL,
    PRIMARY KEY (import_id, line)
) STRICT;
