-- Network label printers (profile zt411r) and their print jobs.
--
-- A printer is also a row of `devices` (profile zt411r), so the site's
-- view raises it offline at its profile's period and priority like any
-- device; the site hears it by asking its host status on the raw port and
-- records each answer in `device_heartbeats` (source 'printer').

-- Where a printer listens, and the flags of its last host status.
CREATE TABLE printers (
    printer_id   TEXT PRIMARY KEY NOT NULL REFERENCES devices (device_id),
    host         TEXT NOT NULL,
    port         INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
    added_at     INTEGER NOT NULL,
    -- The last host status read (null until one is), and what it said.
    status_at    INTEGER,
    paper_out    INTEGER NOT NULL DEFAULT 0 CHECK (paper_out IN (0, 1)),
    paused       INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
    head_open    INTEGER NOT NULL DEFAULT 0 CHECK (head_open IN (0, 1)),
    ribbon_out   INTEGER NOT NULL DEFAULT 0 CHECK (ribbon_out IN (0, 1)),
    -- Why the last poll got no status (null after one that did).
    last_error   TEXT
) STRICT;

-- The printer a handheld's station prints at (receive with encode).
CREATE TABLE printer_stations (
    device_id   TEXT PRIMARY KEY NOT NULL REFERENCES devices (device_id),
    printer_id  TEXT NOT NULL REFERENCES printers (printer_id)
) STRICT;

-- A label to print. A job is kept from the moment it is accepted; it
-- leaves 'pending' once, when it is sent: 'printed' on the printer's
-- answer, 'refused' when an encoded tag read back wrong or void,
-- 'in_doubt' when the format went out and no answer came. Only a person
-- sends a refused or doubtful job again (back to 'pending') or dismisses it.
CREATE TABLE print_jobs (
    job_no        INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id        TEXT NOT NULL UNIQUE,
    printer_id    TEXT NOT NULL REFERENCES printers (printer_id),
    -- The request as accepted (canonical JSON): a retry with the same
    -- job id and another request is refused.
    request       TEXT NOT NULL,
    label         TEXT NOT NULL CHECK (label IN ('bin', 'unit')),
    subject       TEXT NOT NULL,
    encode        INTEGER NOT NULL CHECK (encode IN (0, 1)),
    copies        INTEGER NOT NULL CHECK (copies >= 1),
    zpl           TEXT NOT NULL,
    state         TEXT NOT NULL
                  CHECK (state IN ('pending', 'sending', 'printed', 'in_doubt', 'refused', 'dismissed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    reason        TEXT,
    read_back     TEXT,
    hop_id        INTEGER REFERENCES hops (hop_id),
    requested_by  TEXT NOT NULL,
    accepted_at   INTEGER NOT NULL,
    sent_at       INTEGER,
    settled_at    INTEGER
) STRICT;
CREATE INDEX print_jobs_pending ON print_jobs (printer_id, job_no) WHERE state = 'pending';
CREATE INDEX print_jobs_waiting_for_a_person ON print_jobs (job_no)
    WHERE state IN ('in_doubt', 'refused');
CREATE INDEX print_jobs_settled ON print_jobs (settled_at) WHERE state IN ('printed', 'dismissed');
